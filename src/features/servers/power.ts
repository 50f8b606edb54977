import { and, eq, inArray } from 'drizzle-orm';
import { ClusterNotFoundError } from '../../adapters/cluster/types.js';
import { backgroundLoop, type BackgroundTask } from '../../coordination/index.js';
import type { Queryable } from '../../db/client.js';
import { serverRestarts } from '../../db/schema/servers.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { requireReauth } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { requireAccess } from './core/index.js';
import { startMayClear, startWithinCapacity } from './wakes/index.js';
import { clusterCall, requireServer } from './core/index.js';
import { refuseRetiring } from './retirement.js';
import { inMaintenance } from './service.js';
import { recordExplicitStop } from './wakes/index.js';
import type { ServersParts } from './core/index.js';

/**
 * Restart and emergency stop. A restart is a row (server_restarts) moved on by whichever replica
 * runs the restart round: `stopping` until the server is down (a graceful stop, with the
 * controller's clean save; the step is taken at once by the replicas whose cache sees the server
 * stop, `restartsOnStopTask`, the round being the fallback), then `starting` until it is wanted
 * running again within the wake rules
 * (capacity, cooldown, a world held by a restore, backup or file write, retirement). Each move is a
 * conditional UPDATE from the state it leaves, so of two replicas only one moves it.
 */

export type RestartRow = typeof serverRestarts.$inferSelect;
type PowerDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'log'> & ServersParts;

/** How long a restart waits for the server to stop, and then to be started again, before it fails. */
export const RESTART_STOP_WAIT_MS = 15 * 60_000;
export const RESTART_START_WAIT_MS = 15 * 60_000;
/** How often the restart round runs (one replica at a time). */
const RESTART_ROUND_MS = 5_000;

export async function restartOf(db: Queryable, id: string): Promise<RestartRow | undefined> {
  const [row] = await db.select().from(serverRestarts).where(eq(serverRestarts.id, id));
  return row;
}

/**
 * Begins a restart of a running server: 409 not_running when it is not wanted running,
 * maintenance_in_progress while its world is held, retiring, or conflict while a restart is under
 * way. The row is written before the stop, so a replica that dies between the two leaves a row the
 * next round reads (the server still running: the stop is asked again).
 */
export async function beginRestart(deps: PowerDeps, name: string, requestedBy: string): Promise<RestartRow> {
  const server = await requireServer(deps, name);
  const db = deps.database.db;
  const [active] = await db
    .select({ id: serverRestarts.id })
    .from(serverRestarts)
    .where(and(eq(serverRestarts.serverName, name), inArray(serverRestarts.state, ['stopping', 'starting'])));
  if (active) throw new DomainError('conflict', `${name} is already restarting.`);
  if (server.resource.spec.desiredState !== 'Running') throw new DomainError('not_running', `${name} is not running; wake it instead.`);
  if (await inMaintenance(deps, name)) throw new DomainError('maintenance_in_progress', `${name}'s world is held by a restore, backup or file write.`);
  await refuseRetiring(db, name);
  const now = deps.clock.now();
  const [row] = await db
    .insert(serverRestarts)
    .values({ serverName: name, requestedBy, state: 'stopping', requestedAt: now, stepAt: now })
    .onConflictDoNothing()
    .returning();
  if (!row) throw new DomainError('conflict', `${name} is already restarting.`);
  try {
    await clusterCall(name, () => deps.cluster.setDesiredState(name, 'Stopped'));
  } catch (err) {
    await finishRestart(deps, row.id, 'stopping', 'failed', 'could not stop the server', now);
    throw err;
  }
  return row;
}

/** The panel's restart: owner, staff or a member with `power`. */
export async function restartFromPanel(deps: PowerDeps, name: string, session: SessionContext, requestId: string | undefined): Promise<RestartRow> {
  await requireServer(deps, name);
  await requireAccess(deps, name, session, 'power', `Only ${name}'s owner may restart it.`);
  const row = await beginRestart(deps, name, session.userId);
  await writeAudit(deps.database.db, { at: deps.clock.now(), actor: session, action: 'server.restart', target: name, detail: { restart: row.id }, requestId: requestId ?? null });
  return row;
}

async function finishRestart(deps: PowerDeps, id: string, from: RestartRow['state'], state: 'done' | 'failed', detail: string | null, now: Date): Promise<boolean> {
  const rows = await deps.database.db
    .update(serverRestarts)
    .set({ state, detail, finishedAt: now, stepAt: now })
    .where(and(eq(serverRestarts.id, id), eq(serverRestarts.state, from)))
    .returning();
  const [ended] = rows;
  if (ended) await deps.serverCache.restartEnded({ id, serverName: ended.serverName, state, detail });
  return ended !== undefined;
}

/** Moves one restart on by a step, or leaves it waiting. */
async function advanceRestart(deps: PowerDeps, row: RestartRow): Promise<void> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const waited = now.getTime() - row.stepAt.getTime();
  const server = deps.serverCache.get(row.serverName);
  if (!server) {
    await finishRestart(deps, row.id, row.state, 'failed', 'the server no longer exists', now);
    return;
  }
  const { spec, status } = server.resource;
  if (row.state === 'stopping') {
    // Only the restart stops it; wanted running again means someone started it meanwhile.
    if (spec.desiredState === 'Running') {
      await finishRestart(deps, row.id, 'stopping', 'done', 'someone started the server before the restart stopped it', now);
      return;
    }
    if (status.phase !== 'Stopped') {
      if (waited < RESTART_STOP_WAIT_MS) return;
      await finishRestart(deps, row.id, 'stopping', 'failed', 'the server did not stop within 15 minutes', now);
      return;
    }
    const moved = await db
      .update(serverRestarts)
      .set({ state: 'starting', stepAt: now })
      .where(and(eq(serverRestarts.id, row.id), eq(serverRestarts.state, 'stopping')))
      .returning();
    if (moved[0]) await startAgain(deps, moved[0]);
    return;
  }
  if (row.state === 'starting') await startAgain(deps, row);
}

/** The start of a restart, within the wake rules; a refusal that may clear is waited out. */
async function startAgain(deps: PowerDeps, row: RestartRow): Promise<void> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const waited = now.getTime() - row.stepAt.getTime();
  const server = deps.serverCache.get(row.serverName);
  if (!server) {
    await finishRestart(deps, row.id, 'starting', 'failed', 'the server no longer exists', now);
    return;
  }
  let why: string;
  try {
    await refuseRetiring(db, row.serverName);
    if (await inMaintenance(deps, row.serverName)) throw new DomainError('maintenance_in_progress', 'the world is held by a restore, backup or file write');
    // An explicit stop after the restart was asked for stands: the restart does not undo it.
    await startWithinCapacity(deps, server, { waker: row.requestedBy, privileged: true, owns: true, unlessStoppedSince: row.requestedAt }, row.requestedBy);
    await finishRestart(deps, row.id, 'starting', 'done', null, deps.clock.now());
    return;
  } catch (err) {
    if (!(err instanceof DomainError) && !(err instanceof ClusterNotFoundError)) throw err;
    if (startMayClear(err) && waited < RESTART_START_WAIT_MS) return;
    why = err.message;
  }
  await finishRestart(deps, row.id, 'starting', 'failed', `could not start the server again: ${why}`, now);
  deps.log.warn({ server: row.serverName, restart: row.id, why }, 'a restart could not start the server again');
}

/** One round: every restart under way moves on by a step. A restart's failure never holds up the rest. */
export async function advanceRestarts(deps: PowerDeps): Promise<void> {
  const rows = await deps.database.db.select().from(serverRestarts).where(inArray(serverRestarts.state, ['stopping', 'starting']));
  for (const row of rows) {
    try {
      await advanceRestart(deps, row);
    } catch (err) {
      deps.log.warn({ err, server: row.serverName, restart: row.id }, 'a restart step failed; tried again next round');
    }
  }
}

/**
 * A restart's step from `stopping` to `starting`, taken as soon as this replica's server cache sees
 * its server stopped rather than at the next round (up to 5 s later): on every replica, each
 * reading the restart under way of a server that just stopped (a stop is rare: one query). Two
 * replicas racing are safe, since the step is a conditional UPDATE from `stopping` and only the one
 * that moved it starts the server again. The round stays the fallback (a replica that missed the
 * change, a server that was already down when the restart began, a start refused for a while).
 */
export function restartsOnStopTask(deps: PowerDeps): BackgroundTask {
  let unsubscribe: (() => void) | undefined;
  const steps = new Set<Promise<void>>();
  const onStopped = async (name: string) => {
    const [row] = await deps.database.db
      .select()
      .from(serverRestarts)
      .where(and(eq(serverRestarts.serverName, name), eq(serverRestarts.state, 'stopping')));
    if (row) await advanceRestart(deps, row);
  };
  return {
    name: 'server_restarts_on_stop',
    start() {
      unsubscribe ??= deps.serverCache.onChange((before, after) => {
        // A server first seen (a new one, or the cache's first list) is left to the round: a
        // restart's server was in the cache, running, when the restart began.
        if (!before || before.status.phase === 'Stopped' || after?.status.phase !== 'Stopped') return;
        const name = after.spec.name;
        const step: Promise<void> = onStopped(name)
          .catch((err: unknown) => deps.log.warn({ err, server: name }, 'a restart step on the server\'s stop failed; the restart round tries again'))
          .finally(() => steps.delete(step));
        steps.add(step);
      });
    },
    async stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      await Promise.all(steps);
    },
  };
}

/** The restart round as a background task, on one replica at a time. */
export function restartsTask(deps: PowerDeps, replica: string): BackgroundTask {
  return backgroundLoop(
    { db: deps.database.db, clock: deps.clock, log: deps.log, replica },
    { name: 'server_restarts', replicas: 'one', intervalMs: RESTART_ROUND_MS, firstAfterMs: 1_000, round: () => advanceRestarts(deps) },
  );
}

/**
 * The emergency stop, for owner or staff with a fresh proof (403 reauth_required) who typed the
 * server's name (400 bad_request otherwise): the pod ends at once, without the clean save. Audited
 * as `emergency_stop`, or `emergency_stop.failed` when the cluster refused (then 503 or 404).
 */
export async function emergencyStop(deps: PowerDeps, name: string, confirm: string, session: SessionContext, requestId: string | undefined): Promise<void> {
  await requireServer(deps, name);
  await requireAccess(deps, name, session, 'power', `Only ${name}'s owner may stop it.`);
  await requireReauth(deps, session);
  if (confirm !== name) throw new DomainError('bad_request', 'Type the exact server name to confirm.');
  const db = deps.database.db;
  const audit = (action: string, detail: Record<string, unknown> | null) =>
    writeAudit(db, { at: deps.clock.now(), actor: session, action, target: name, detail, requestId: requestId ?? null });
  // Recorded first (servers/stops.ts): a scheduled run or a restart never starts it again after this.
  await recordExplicitStop(deps, name, session.userId, 'emergency_stop');
  try {
    await clusterCall(name, () => deps.cluster.emergencyStop(name));
  } catch (err) {
    await audit('emergency_stop.failed', { code: err instanceof DomainError ? err.code : 'internal' });
    throw err;
  }
  // A restart under way would start it again: it ends here.
  const now = deps.clock.now();
  const ended = await db
    .update(serverRestarts)
    .set({ state: 'failed', detail: 'ended by an emergency stop', finishedAt: now, stepAt: now })
    .where(and(eq(serverRestarts.serverName, name), inArray(serverRestarts.state, ['stopping', 'starting'])))
    .returning();
  for (const row of ended) await deps.serverCache.restartEnded({ id: row.id, serverName: name, state: 'failed', detail: row.detail });
  await audit('emergency_stop', null);
}
