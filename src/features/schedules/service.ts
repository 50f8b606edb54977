import { and, asc, count, eq, isNull } from 'drizzle-orm';
import { lockForTransaction } from '../../coordination/index.js';
import type { Transaction } from '../../db/client.js';
import { serverSchedules } from '../../db/schema/schedules.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { writeAudit } from '../audit/index.js';
import { ownerOf, requireAccess, requireServer } from '../servers/index.js';
import { beginRun, claimRun, type EngineDeps, type ScheduleRow } from './engine.js';
import { nextRun } from './next-run.js';
import { MAX_SCHEDULES_PER_SERVER, scheduleSettings, type ScheduleSettings } from './rules.js';
import type { ScheduleInput } from './schema.js';

/** Who asks, and the request for the audit row. */
export interface ScheduleCaller {
  session: SessionContext;
  requestId: string | undefined;
}

/** The schedule routes' gate: 404 for an unknown server, 403 for anyone but its owner or staff. */
async function scheduleServer(deps: EngineDeps, name: string, session: SessionContext): Promise<void> {
  await requireServer(deps, name);
  await requireAccess(deps, name, session, 'schedules', `Only ${name}'s owner may manage its schedules.`);
}

const notFound = () => new DomainError('not_found', 'No such schedule.');
const running = () => new DomainError('schedule_running', 'This schedule is running; try again once the run finishes.');

async function scheduleOf(deps: EngineDeps, name: string, id: number): Promise<ScheduleRow> {
  const [row] = await deps.database.db
    .select()
    .from(serverSchedules)
    .where(and(eq(serverSchedules.serverName, name), eq(serverSchedules.id, id)));
  if (!row) throw notFound();
  return row;
}

async function audit(deps: EngineDeps, caller: ScheduleCaller, action: string, row: ScheduleRow): Promise<void> {
  await writeAudit(deps.database.db, {
    at: deps.clock.now(),
    actor: caller.session,
    action,
    target: row.serverName,
    detail: { schedule: row.id, action: row.action },
    requestId: caller.requestId ?? null,
  });
}

/** The columns a save writes: the settings, the owner it now serves, its next run (none while disabled). */
function savedColumns(deps: EngineDeps, settings: ScheduleSettings, owner: string | undefined) {
  return {
    ...settings,
    ownerId: owner ?? null,
    nextRunAt: settings.enabled ? (nextRun(settings, deps.clock.now()) ?? null) : null,
    warnedFor: null,
  };
}

/** A server's schedules, oldest first. */
export async function listSchedules(deps: EngineDeps, name: string, session: SessionContext): Promise<ScheduleRow[]> {
  await scheduleServer(deps, name, session);
  return deps.database.db.select().from(serverSchedules).where(eq(serverSchedules.serverName, name)).orderBy(asc(serverSchedules.id));
}

/** A new schedule, for the server's current owner: 409 schedule_limit past 20 (counted under a lock, so replicas agree). */
export async function createSchedule(deps: EngineDeps, name: string, input: ScheduleInput, caller: ScheduleCaller): Promise<ScheduleRow> {
  await scheduleServer(deps, name, caller.session);
  const settings = scheduleSettings(input);
  const db = deps.database.db;
  const owner = await ownerOf(db, name);
  const row = await db.transaction(async (tx) => {
    await lockForTransaction(tx, { scope: 'schedules', serverName: name });
    const [held] = await tx.select({ n: count() }).from(serverSchedules).where(eq(serverSchedules.serverName, name));
    if ((held?.n ?? 0) >= MAX_SCHEDULES_PER_SERVER) {
      throw new DomainError('schedule_limit', `A server can have at most ${MAX_SCHEDULES_PER_SERVER} scheduled tasks.`);
    }
    const [inserted] = await tx
      .insert(serverSchedules)
      .values({ serverName: name, ...savedColumns(deps, settings, owner), createdBy: caller.session.userId, createdAt: deps.clock.now() })
      .returning();
    return inserted!;
  });
  await audit(deps, caller, 'schedule.create', row);
  return row;
}

/** New settings; the schedule passes to the server's current owner. 409 schedule_running during a run. */
export async function updateSchedule(deps: EngineDeps, name: string, id: number, input: ScheduleInput, caller: ScheduleCaller): Promise<ScheduleRow> {
  await scheduleServer(deps, name, caller.session);
  await scheduleOf(deps, name, id);
  const settings = scheduleSettings(input);
  const owner = await ownerOf(deps.database.db, name);
  const [row] = await deps.database.db
    .update(serverSchedules)
    .set({ ...savedColumns(deps, settings, owner), lastDetail: null })
    .where(and(eq(serverSchedules.id, id), eq(serverSchedules.serverName, name), isNull(serverSchedules.runState)))
    .returning();
  if (!row) throw running();
  await audit(deps, caller, 'schedule.update', row);
  return row;
}

/** Removes a schedule; 409 schedule_running during a run. */
export async function deleteSchedule(deps: EngineDeps, name: string, id: number, caller: ScheduleCaller): Promise<void> {
  await scheduleServer(deps, name, caller.session);
  await scheduleOf(deps, name, id);
  const [row] = await deps.database.db
    .delete(serverSchedules)
    .where(and(eq(serverSchedules.id, id), eq(serverSchedules.serverName, name), isNull(serverSchedules.runState)))
    .returning();
  if (!row) throw running();
  await audit(deps, caller, 'schedule.delete', row);
}

/**
 * Removes every schedule of a server that is gone for good (deleted in the cluster itself), a run
 * in progress included: there is no server left for it to act on. In the caller's transaction,
 * under the lock a new schedule of the server takes, so none is added beside the removal;
 * answers how many went. The servers feature is handed it by the composition root (it sits
 * below schedules and may not import it).
 */
export async function forgetServerSchedules(tx: Transaction, name: string): Promise<number> {
  await lockForTransaction(tx, { scope: 'schedules', serverName: name });
  return (await tx.delete(serverSchedules).where(eq(serverSchedules.serverName, name)).returning({ id: serverSchedules.id })).length;
}

/**
 * Runs a schedule now, without the players' warning; its next scheduled run stays where it is.
 * Claimed like a due run (409 schedule_running when a run is in progress, on any replica; queued
 * behind another schedule's run on the server); the
 * answer is the schedule after the run's first step, and a restart or backup goes on in the rounds.
 */
export async function runScheduleNow(deps: EngineDeps, name: string, id: number, caller: ScheduleCaller): Promise<ScheduleRow> {
  await scheduleServer(deps, name, caller.session);
  const row = await scheduleOf(deps, name, id);
  if ((row.ownerId ?? undefined) !== (await ownerOf(deps.database.db, name))) {
    throw new DomainError('schedule_stale', 'The server has a new owner since this schedule was saved; save it again first.');
  }
  const claimed = await claimRun(deps, row, deps.replica);
  if (!claimed) throw running();
  await audit(deps, caller, 'schedule.run_now', claimed);
  // Another run on the server is in progress: this one is queued behind it (run_state `queued`).
  if (claimed.runState === 'claimed') await beginRun(deps, claimed);
  return scheduleOf(deps, name, id);
}
