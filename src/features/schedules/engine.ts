import { and, asc, eq, isNotNull, isNull, lte, ne, or } from 'drizzle-orm';
import { backgroundLoop, lockForTransaction, type BackgroundTask } from '../../coordination/index.js';
import { serverSchedules, RUN_STATES } from '../../db/schema/schedules.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { writeAudit } from '../audit/index.js';
import { countScheduleRun, type FleetParts } from '../fleet/index.js';
import { raiseEvent } from '../notifications/index.js';
import { rconCommand } from '../console/index.js';
import { beginRestart, explicitStopSince, inMaintenance, ownerOf, restartOf, startMayClear, startWithinCapacity, stopWords, type CachedServer, type EndedRestart } from '../servers/index.js';
import { jobOf, pruneScheduledBackups, startBackup } from '../worlds/index.js';
import { nextRun } from './next-run.js';
import { warningLine } from './rules.js';
import type { WorldsParts } from '../worlds/index.js';
import type { ServersParts } from '../servers/index.js';

/**
 * The schedule runner. Each round (on one replica at a time, src/coordination) warns the players
 * about the runs coming up, claims the runs that are due and moves every run in progress one step
 * on. All of a run's state is its schedule's row, and every change of it is a conditional UPDATE
 * from the state it leaves, so:
 * - a due run is claimed by exactly one replica (`run_state` null and `next_run_at` the due time,
 *   in the same statement that sets them), even when a run on request races the round;
 * - a replica that dies mid-run leaves the row where it was: a run waiting on the server or on a
 *   world job is carried on by the next round on any replica; a run that died inside its first step
 *   (`claimed` for longer than CLAIMED_STALE_MS) is marked failed, never started again, since
 *   nobody can know whether its command or stop was sent;
 * - the missed-run rule: a run found due more than SCHEDULE_MISS_GRACE_MINUTES late (every replica
 *   was down at its time) is not made: it is recorded `missed` and the schedule moves on to its
 *   next time, so a restart never lands hours after its time. Within the grace it runs late.
 * - runs on one server go one at a time: a run that falls due while another run on its server is in
 *   progress is claimed as `queued` (so it is made once, and never counted missed for the wait), and
 *   begins when the run before it ends, on the replica that ended it: in the order they fell due,
 *   then by schedule id (so same-minute schedules run in the order they were made);
 * - a restart run ends when its restart does (the servers feature tells the replica that ended
 *   it, `onRestartEnded`), not a round later;
 * - an explicit stop (the panel's stop, the emergency stop) during a run stands: a run that stopped
 *   the server to take its backup does not start it again, and says so.
 * A backup never fights a restore, backup or file write holding the world: its step waits for the
 * world (up to STEP_WAIT_MS) and records why when it gives up; a start or restart that finds the
 * world held records why it did not run.
 */

export type ScheduleRow = typeof serverSchedules.$inferSelect;
export type RunState = (typeof RUN_STATES)[number];
export type EngineDeps = Pick<Deps & WorldsParts, 'database' | 'cluster' | 'config' | 'clock' | 'log' | 'rcon' | 'worlds' | 'random' | 'replica' | 'metrics' | 'staging'> & ServersParts & FleetParts;

/** How long a run may sit in its first step before it is taken for one whose replica died. */
export const CLAIMED_STALE_MS = 2 * 60_000;
/** How long a step waits for the server to stop, the world to come free, or the server to start. */
export const STEP_WAIT_MS = 15 * 60_000;
/** How long a run waits for its backup job (past a world job's own time-outs). */
export const BACKUP_WAIT_MS = 6 * 60 * 60_000;
/** The longest warning lead time: schedules due within it are looked at each round. */
const WARN_HORIZON_MS = 30 * 60_000;
/** The stored outcome of a run is cut to this many characters (a command's reply can be long). */
const MAX_DETAIL = 500;
const SCHEDULER = 'scheduler';

const idle = isNull(serverSchedules.runState);
const withId = (id: number) => eq(serverSchedules.id, id);

/**
 * Claims a run: the due run `due` of an enabled schedule (moving it on to `next`), or with `due`
 * undefined a run on request. Under the server's schedules lock: when another run on the server is
 * in progress, the run is claimed `queued` (its `last_run_at` the time it fell due, its place in
 * the queue); otherwise `claimed`, and the caller begins it.
 */
export async function claimRun(deps: EngineDeps, row: ScheduleRow, replica: string, due?: Date): Promise<ScheduleRow | undefined> {
  const now = deps.clock.now();
  const where = due
    ? and(withId(row.id), idle, eq(serverSchedules.enabled, true), eq(serverSchedules.nextRunAt, due))
    : and(withId(row.id), idle);
  const next = due ? (nextRun(row, now) ?? null) : undefined;
  return deps.database.db.transaction(async (tx) => {
    await lockForTransaction(tx, { scope: 'schedules', serverName: row.serverName });
    const [busy] = await tx
      .select({ id: serverSchedules.id })
      .from(serverSchedules)
      .where(and(eq(serverSchedules.serverName, row.serverName), isNotNull(serverSchedules.runState), ne(serverSchedules.id, row.id)))
      .limit(1);
    const [claimed] = await tx
      .update(serverSchedules)
      .set({
        runState: busy ? 'queued' : 'claimed',
        runHolder: replica,
        runStepAt: now,
        runResume: false,
        runRef: null,
        lastRunAt: busy ? (due ?? now) : now,
        lastResult: null,
        lastDetail: null,
        ...(next !== undefined ? { nextRunAt: next } : {}),
      })
      .where(where)
      .returning();
    return claimed;
  });
}

/**
 * Begins the first queued run of a server once no other run on it is in progress (the one before
 * it just ended). A replica that dies between the two leaves the queued row, which the next round
 * begins.
 */
async function beginNextQueued(deps: EngineDeps, serverName: string): Promise<void> {
  const next = await deps.database.db.transaction(async (tx) => {
    await lockForTransaction(tx, { scope: 'schedules', serverName });
    const rows = await tx
      .select()
      .from(serverSchedules)
      .where(and(eq(serverSchedules.serverName, serverName), isNotNull(serverSchedules.runState)))
      .orderBy(asc(serverSchedules.lastRunAt), asc(serverSchedules.id));
    if (rows.some((r) => r.runState !== 'queued')) return undefined;
    const [first] = rows;
    if (!first) return undefined;
    const now = deps.clock.now();
    const [begun] = await tx
      .update(serverSchedules)
      .set({ runState: 'claimed', runHolder: deps.replica, runStepAt: now, lastRunAt: now })
      .where(and(withId(first.id), eq(serverSchedules.runState, 'queued')))
      .returning();
    return begun;
  });
  if (next) await beginRun(deps, next);
}

/** Moves a run from step `from` to `to`; false when another replica moved it first. */
async function advance(deps: EngineDeps, row: ScheduleRow, from: RunState, to: RunState, set: Partial<ScheduleRow> = {}): Promise<ScheduleRow | undefined> {
  const [moved] = await deps.database.db
    .update(serverSchedules)
    .set({ ...set, runState: to, runStepAt: deps.clock.now() })
    .where(and(withId(row.id), eq(serverSchedules.runState, from)))
    .returning();
  return moved;
}

/**
 * Ends a run at step `from` with its outcome, and leaves one `schedule.run` audit row; a failed
 * run also raises `schedule.failed` for the webhooks, in the same transaction. The run is counted
 * in `felis_schedule_runs_total` by the replica that ended it.
 */
async function finish(deps: EngineDeps, row: ScheduleRow, from: RunState, result: 'ok' | 'skipped' | 'failed', detail = ''): Promise<void> {
  const cut = detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL - 1)}…` : detail;
  const at = deps.clock.now();
  const ended = await deps.database.db.transaction(async (tx) => {
    const moved = await tx
      .update(serverSchedules)
      .set({ runState: null, runHolder: null, runStepAt: null, runRef: null, runResume: false, lastResult: result, lastDetail: cut })
      .where(and(withId(row.id), eq(serverSchedules.runState, from)))
      .returning({ id: serverSchedules.id });
    if (moved.length === 0) return false;
    await writeAudit(tx, {
      at,
      actor: SCHEDULER,
      action: 'schedule.run',
      target: row.serverName,
      detail: { schedule: row.id, action: row.action, result, ...(cut ? { detail: cut } : {}) },
      requestId: null,
    });
    if (result === 'failed') {
      await raiseEvent(tx, {
        type: 'schedule.failed',
        at,
        summary: `The ${row.action} schedule${row.label ? ` "${row.label}"` : ''} of ${row.serverName} failed${cut ? `: ${cut}` : ''}`,
        subject: { kind: 'schedule', id: String(row.id) },
        data: { server: row.serverName, schedule: row.id, action: row.action, detail: cut },
      });
    }
    return true;
  });
  if (!ended) return;
  countScheduleRun(deps, result);
  await beginNextQueued(deps, row.serverName);
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Starts the server for a run: the wake path of its owner. With `since` (the run's start), a
 * start that would undo an explicit stop made since is refused (servers/stops.ts).
 */
async function startForRun(deps: EngineDeps, server: CachedServer, since?: Date): Promise<void> {
  const name = server.resource.spec.name;
  if (await inMaintenance(deps, name)) {
    throw new DomainError('maintenance_in_progress', 'the world is held by a restore, backup or file write');
  }
  const owner = await ownerOf(deps.database.db, name);
  await startWithinCapacity(deps, server, { waker: owner ?? SCHEDULER, privileged: true, owns: owner !== undefined, unlessStoppedSince: since }, SCHEDULER);
}

/** Takes the first step of a run just claimed (`claimed`). */
export async function beginRun(deps: EngineDeps, row: ScheduleRow): Promise<void> {
  const done = (result: 'ok' | 'skipped' | 'failed', detail = '') => finish(deps, row, 'claimed', result, detail);
  const server = deps.serverCache.get(row.serverName);
  if (!server) return done('skipped', 'the server no longer exists');
  const { spec, status } = server.resource;
  const running = spec.desiredState === 'Running';
  const name = row.serverName;
  try {
    switch (row.action) {
      case 'command': {
        if (status.phase !== 'Running') return done('skipped', 'the server was not running');
        const output = await rconCommand(deps, name, row.command);
        return done('ok', output.replace(/§./g, ''));
      }
      case 'stop':
        if (!running) return done('skipped', 'the server was already stopped');
        await deps.cluster.setDesiredState(name, 'Stopped');
        return done('ok');
      case 'start':
        if (running && status.phase !== 'Failed') return done('skipped', 'the server was already running');
        try {
          await startForRun(deps, server);
        } catch (err) {
          if (err instanceof DomainError) return done('skipped', `the server was not started: ${err.message}`);
          throw err;
        }
        return done('ok');
      case 'restart': {
        if (!running) return done('skipped', 'the server was not running');
        let restart;
        try {
          restart = await beginRestart(deps, name, SCHEDULER);
        } catch (err) {
          if (err instanceof DomainError && ['maintenance_in_progress', 'conflict', 'retiring', 'not_running'].includes(err.code)) {
            return done('skipped', `the server was not restarted: ${err.message}`);
          }
          throw err;
        }
        await advance(deps, row, 'claimed', 'restarting', { runRef: restart.id });
        return;
      }
      case 'backup': {
        // The stop is recorded before it is asked for: a replica that dies between the two leaves
        // a run the next round carries on (it asks for the stop again).
        const moved = await advance(deps, row, 'claimed', 'stopping', { runResume: running });
        if (!moved) return;
        if (running) {
          try {
            await deps.cluster.setDesiredState(name, 'Stopped');
          } catch (err) {
            return finish(deps, moved, 'stopping', 'failed', `could not stop the server: ${reason(err)}`);
          }
        }
        return advanceRun(deps, moved);
      }
    }
  } catch (err) {
    return done('failed', reason(err));
  }
}

/** Moves a run in progress on by one step, or leaves it waiting. */
export async function advanceRun(deps: EngineDeps, row: ScheduleRow): Promise<void> {
  const now = deps.clock.now();
  const waited = now.getTime() - (row.runStepAt ?? now).getTime();
  const state = row.runState;
  if (state === 'claimed') {
    if (waited < CLAIMED_STALE_MS) return; // its first step is running now, on some replica
    return finish(deps, row, 'claimed', 'failed', 'the replica running this run stopped in the middle of its first step; it was not run again');
  }
  if (state === 'queued') return beginNextQueued(deps, row.serverName);
  if (state === 'restarting') return advanceRestarting(deps, row);
  const server = deps.serverCache.get(row.serverName);
  if (!server) return finish(deps, row, state!, 'skipped', 'the server no longer exists');
  if (state === 'stopping') return advanceStopping(deps, row, server, waited);
  if (state === 'backing_up') return advanceBackingUp(deps, row, waited);
  if (state === 'starting') return advanceStarting(deps, row, server, waited);
}

async function advanceRestarting(deps: EngineDeps, row: ScheduleRow): Promise<void> {
  const restart = row.runRef ? await restartOf(deps.database.db, row.runRef) : undefined;
  if (!restart) return finish(deps, row, 'restarting', 'failed', 'the restart is gone');
  if (restart.state === 'done') return finish(deps, row, 'restarting', 'ok', restart.detail ?? '');
  if (restart.state === 'failed') return finish(deps, row, 'restarting', 'failed', restart.detail ?? 'the restart failed');
  // stopping or starting: the servers feature's restart round moves it on.
}

/** Starts the server again when the run stopped it, and records the outcome so far. */
async function resumeOrFinish(deps: EngineDeps, row: ScheduleRow, from: RunState, result: 'ok' | 'failed', detail: string, server?: CachedServer): Promise<void> {
  if (!row.runResume) return finish(deps, row, from, result, detail);
  const moved = await advance(deps, row, from, 'starting', { lastResult: result, lastDetail: detail });
  if (moved && server) return advanceStarting(deps, moved, server, 0);
}

async function advanceStopping(deps: EngineDeps, row: ScheduleRow, server: CachedServer, waited: number): Promise<void> {
  const { spec, status } = server.resource;
  const name = row.serverName;
  // Only this run stops the server; wanted running again means someone started it meanwhile, and
  // their start stands.
  if (spec.desiredState === 'Running') return finish(deps, row, 'stopping', 'skipped', 'someone started the server before the backup could be taken');
  const giveUp = (detail: string) => (waited < STEP_WAIT_MS ? undefined : resumeOrFinish(deps, row, 'stopping', 'failed', detail, server));
  if (status.phase !== 'Stopped') return giveUp('the server did not stop within 15 minutes');
  let jobId: string;
  try {
    ({ jobId } = await startBackup(deps, name, SCHEDULER, 'scheduled'));
  } catch (err) {
    if (err instanceof DomainError && (err.code === 'maintenance_in_progress' || err.code === 'not_stopped')) {
      return giveUp('a restore, backup or file write held the world for 15 minutes, so no backup was taken');
    }
    if (startMayClear(err)) return giveUp(`the backup could not start: ${reason(err)}`);
    return resumeOrFinish(deps, row, 'stopping', 'failed', `the backup could not start: ${reason(err)}`, server);
  }
  await advance(deps, row, 'stopping', 'backing_up', { runRef: jobId });
}

async function advanceBackingUp(deps: EngineDeps, row: ScheduleRow, waited: number): Promise<void> {
  const job = row.runRef ? await jobOf(deps.database.db, row.runRef) : undefined;
  const server = deps.serverCache.get(row.serverName);
  if (!job) return resumeOrFinish(deps, row, 'backing_up', 'failed', 'the backup job is gone', server);
  if (job.state === 'running') {
    if (waited < BACKUP_WAIT_MS) return;
    return resumeOrFinish(deps, row, 'backing_up', 'failed', 'the backup did not finish in time', server);
  }
  if (job.state === 'failed') return resumeOrFinish(deps, row, 'backing_up', 'failed', `the backup failed: ${job.message ?? ''}`.trim(), server);
  await pruneScheduledBackups(deps, row.serverName);
  return resumeOrFinish(deps, row, 'backing_up', 'ok', '', server);
}

async function advanceStarting(deps: EngineDeps, row: ScheduleRow, server: CachedServer, waited: number): Promise<void> {
  const prior = row.lastResult === 'failed' && row.lastDetail ? `${row.lastDetail}; ` : '';
  const result = row.lastResult === 'failed' ? 'failed' : 'ok';
  // The run stopped the server; an explicit stop since (its owner's, an emergency stop) stands.
  const since = row.lastRunAt ?? row.runStepAt ?? deps.clock.now();
  const stoppedSince = async () => {
    const stop = await explicitStopSince(deps.database.db, row.serverName, since);
    return stop && finish(deps, row, 'starting', result, `${prior}the server was not started again: ${stopWords(stop)} during the run stands`);
  };
  if (await stoppedSince()) return;
  try {
    if (server.resource.spec.desiredState !== 'Running') await startForRun(deps, server, since);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'conflict' && (await stoppedSince())) return;
    if (startMayClear(err) && waited < STEP_WAIT_MS) return;
    return finish(deps, row, 'starting', 'failed', `${prior}could not start the server again: ${reason(err)}`);
  }
  return finish(deps, row, 'starting', result, row.lastDetail ?? '');
}

/** A world job ended: the backup run waiting on it goes on now, on the replica that recorded the end. */
async function backupEnded(deps: EngineDeps, jobId: string): Promise<void> {
  const rows = await deps.database.db
    .select()
    .from(serverSchedules)
    .where(and(eq(serverSchedules.runState, 'backing_up'), eq(serverSchedules.runRef, jobId)));
  for (const row of rows) await advanceRun(deps, row);
}

/** Carries backup runs on as their jobs end (every replica: whichever records a job's end tells its own listener). */
export function followBackups(deps: EngineDeps): () => void {
  return deps.worlds.jobs.onEnded((jobId) => {
    backupEnded(deps, jobId).catch((err: unknown) => deps.log.warn({ err, job: jobId }, 'a backup run could not go on with its job; the next round carries it on'));
  });
}

/** A restart ended: the run that asked for it ends with it, on the replica that ended the restart. */
async function restartEnded(deps: EngineDeps, restart: EndedRestart): Promise<void> {
  const rows = await deps.database.db
    .select()
    .from(serverSchedules)
    .where(and(eq(serverSchedules.serverName, restart.serverName), eq(serverSchedules.runState, 'restarting'), eq(serverSchedules.runRef, restart.id)));
  for (const row of rows) await advanceRestarting(deps, row);
}

/** Tells the players a restart, stop or backup is coming, once per run, when its warning time has come. */
async function warn(deps: EngineDeps, row: ScheduleRow, due: Date, now: Date): Promise<void> {
  if (row.warnMinutes === 0 || now.getTime() < due.getTime() - row.warnMinutes * 60_000) return;
  if (row.warnedFor?.getTime() === due.getTime()) return;
  const server = deps.serverCache.get(row.serverName);
  if (server?.resource.status.phase !== 'Running') return;
  const marked = await deps.database.db
    .update(serverSchedules)
    .set({ warnedFor: due })
    .where(and(withId(row.id), idle, eq(serverSchedules.nextRunAt, due), or(isNull(serverSchedules.warnedFor), ne(serverSchedules.warnedFor, due))))
    .returning({ id: serverSchedules.id });
  if (marked.length === 0) return;
  // Warned late (every replica was down at the warning time): say how long is really left.
  const minutes = Math.max(1, Math.ceil((due.getTime() - now.getTime()) / 60_000));
  try {
    await rconCommand(deps, row.serverName, `say ${warningLine(row.action, minutes)}`);
  } catch (err) {
    deps.log.warn({ server: row.serverName, schedule: row.id, err: reason(err) }, 'could not warn the players of a scheduled run');
  }
}

/** Does what one schedule needs now. */
async function tickSchedule(deps: EngineDeps, row: ScheduleRow, replica: string, now: Date): Promise<void> {
  if (row.runState) return advanceRun(deps, row);
  if (!row.enabled || !row.nextRunAt) return;
  // Somebody else's server now: their commands must not run on it. Saving it again hands it over.
  const owner = (await ownerOf(deps.database.db, row.serverName)) ?? null;
  if (owner !== row.ownerId) {
    await deps.database.db
      .update(serverSchedules)
      .set({ enabled: false, nextRunAt: null, lastDetail: 'the server has a new owner since this schedule was saved; save it again to use it' })
      .where(and(withId(row.id), idle, eq(serverSchedules.enabled, true)));
    return;
  }
  const due = row.nextRunAt;
  if (now < due) return warn(deps, row, due, now);
  const graceMs = deps.config.scheduleMissGraceMinutes * 60_000;
  if (now.getTime() - due.getTime() > graceMs) {
    const missed = await deps.database.db
      .update(serverSchedules)
      .set({ nextRunAt: nextRun(row, now) ?? null, lastRunAt: due, lastResult: 'missed', lastDetail: 'no replica of the control plane was running at the scheduled time' })
      .where(and(withId(row.id), idle, eq(serverSchedules.nextRunAt, due)))
      .returning({ id: serverSchedules.id });
    if (missed.length) deps.log.info({ server: row.serverName, schedule: row.id, due }, 'a scheduled run was missed');
    return;
  }
  const claimed = await claimRun(deps, row, replica, due);
  if (claimed?.runState === 'claimed') await beginRun(deps, claimed);
}

/** One round: every schedule due (or warning) soon and every run in progress. One failure never holds up the rest. */
export async function tickSchedules(deps: EngineDeps, replica: string): Promise<void> {
  const cache = deps.serverCache;
  if (!cache.synced) return; // nothing is judged on a cache that has not seen the cluster yet
  const now = deps.clock.now();
  const rows = await deps.database.db
    .select()
    .from(serverSchedules)
    .where(
      or(
        isNotNull(serverSchedules.runState),
        and(eq(serverSchedules.enabled, true), lte(serverSchedules.nextRunAt, new Date(now.getTime() + WARN_HORIZON_MS))),
      ),
    )
    .orderBy(serverSchedules.nextRunAt, serverSchedules.id);
  for (const row of rows) {
    try {
      await tickSchedule(deps, row, replica, now);
    } catch (err) {
      deps.log.warn({ err, server: row.serverName, schedule: row.id }, 'a schedule could not be run; tried again next round');
    }
  }
}

/**
 * The schedule round as a background task, on one replica at a time. A round's lease covers at
 * least ROUND_LEASE_MS (a minute, src/coordination), so whichever replica runs them, rounds come
 * at most once a minute: SCHEDULE_TICK_SECONDS below 60 only makes a replica ask sooner.
 */
export function schedulesTask(deps: EngineDeps, replica: string): BackgroundTask {
  const loop = backgroundLoop(
    { db: deps.database.db, clock: deps.clock, log: deps.log, replica },
    { name: 'schedules', replicas: 'one', intervalMs: deps.config.scheduleTickSeconds * 1000, firstAfterMs: 2_000, round: () => tickSchedules(deps, replica) },
  );
  let unsubscribe: Array<() => void> | undefined;
  return {
    name: loop.name,
    start() {
      unsubscribe ??= [followRestarts(deps), followBackups(deps)];
      loop.start();
    },
    async stop() {
      for (const off of unsubscribe ?? []) off();
      unsubscribe = undefined;
      await loop.stop();
    },
  };
}

/** Ends restart runs as their restarts end (on every replica: whichever ends a restart tells its own listener). */
export function followRestarts(deps: EngineDeps): () => void {
  return deps.serverCache.onRestartEnded(async (restart) => {
    try {
      await restartEnded(deps, restart);
    } catch (err) {
      deps.log.warn({ err, server: restart.serverName, restart: restart.id }, 'a restart run could not be ended with its restart; the next round ends it');
    }
  });
}
