import { bigint, boolean, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** What a schedule does when it runs (the original's five actions). */
export const SCHEDULE_ACTIONS = ['command', 'restart', 'stop', 'start', 'backup'] as const;
/**
 * The step of a run in progress: `claimed` while its first step runs, `stopping` until the server is
 * down, `backing_up` while the world job runs, `starting` until it is wanted running again,
 * `restarting` while the servers feature restarts it; `queued` while another run on the same server
 * is in progress (runs on one server go one at a time, in the order they fell due, then by
 * schedule id). Null when no run is in progress.
 */
export const RUN_STATES = ['claimed', 'stopping', 'backing_up', 'starting', 'restarting', 'queued'] as const;
/** How a run ended. `missed`: every replica was down past the grace, so the run was not made. */
export const RUN_RESULTS = ['ok', 'skipped', 'failed', 'missed'] as const;

/**
 * A server's scheduled tasks. The run columns are the run's whole state, so any replica can carry
 * a run on where another left it; each step moves with a conditional UPDATE (from one state to the
 * next), so two replicas racing never both take it.
 */
export const serverSchedules = pgTable(
  'server_schedules',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    serverName: text('server_name').notNull(),
    /** The server's owner when the schedule was saved; the runner fires it only while they still own it. */
    ownerId: uuid('owner_id').references(() => users.id, { onDelete: 'set null' }),
    label: text('label').notNull().default(''),
    action: text('action', { enum: SCHEDULE_ACTIONS }).notNull(),
    command: text('command').notNull().default(''),
    everyMinutes: integer('every_minutes').notNull().default(0),
    minuteOfDay: integer('minute_of_day').notNull().default(0),
    weekdays: integer('weekdays').notNull(),
    timezone: text('timezone').notNull(),
    warnMinutes: integer('warn_minutes').notNull().default(0),
    enabled: boolean('enabled').notNull().default(true),
    nextRunAt: at('next_run_at'),
    /** The due time whose warning went out (once per run). */
    warnedFor: at('warned_for'),
    runState: text('run_state', { enum: RUN_STATES }),
    /** The replica that claimed the run (for the log; the step's age decides a take-over). */
    runHolder: text('run_holder'),
    runStepAt: at('run_step_at'),
    /** The run stopped a running server and starts it again when done. */
    runResume: boolean('run_resume').notNull().default(false),
    /** What the step waits on: the restart's id, the backup job's id. */
    runRef: text('run_ref'),
    lastRunAt: at('last_run_at'),
    lastResult: text('last_result', { enum: RUN_RESULTS }),
    lastDetail: text('last_detail'),
    createdBy: text('created_by').notNull(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('server_schedules_server_idx').on(t.serverName, t.id), index('server_schedules_next_idx').on(t.nextRunAt)],
);
