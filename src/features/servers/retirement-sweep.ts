import { eq, sql } from 'drizzle-orm';
import { ClusterNotFoundError } from '../../adapters/cluster/types.js';
import type { Transaction } from '../../db/client.js';
import { auditLog } from '../../db/schema/audit.js';
import { serverClaims, serverGuestWakes, serverRetirements, serverWakeAllowlist, serverWakes } from '../../db/schema/servers.js';
import type { Deps } from '../../deps.js';
import { serverCacheOf } from './cache.js';
import { integerSetting, SERVER_SETTINGS } from './settings.js';

/** Only the replica that holds this lock for a round runs it (PGlite: the one process always does). */
export const SWEEP_LOCK_KEY = 0x46454c5257n; // "FELRW"

type SweepDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'log'>;

/** Whether this transaction won the round's lock; postgres-js answers rows, PGlite `{rows}`. */
async function tryRoundLock(tx: Transaction): Promise<boolean> {
  const result = (await tx.execute(sql`select pg_try_advisory_xact_lock(${SWEEP_LOCK_KEY.toString()}::bigint) as locked`)) as unknown;
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Array<{ locked: boolean }>;
  return rows[0]?.locked === true;
}

/**
 * One round of the retirement sweep: every retiring server is asked to stop; one that has stopped
 * is released (its claim, allowlist and wake records go, so it is claimable again) or, with
 * `delete`, removed from the cluster. Returns the servers carried out, or undefined when another
 * replica holds the round.
 */
export async function sweepRetirements(deps: SweepDeps): Promise<string[] | undefined> {
  return deps.database.db.transaction(async (tx) => {
    if (!(await tryRoundLock(tx))) return undefined;
    const done: string[] = [];
    const cache = serverCacheOf(deps);
    for (const retiring of await tx.select().from(serverRetirements)) {
      const name = retiring.serverName;
      const server = cache.get(name);
      try {
        if (server && server.resource.status.phase !== 'Stopped') {
          if (server.resource.spec.desiredState !== 'Stopped') await deps.cluster.setDesiredState(name, 'Stopped');
          continue;
        }
        if (server && retiring.delete) await deps.cluster.removeServer(name);
      } catch (err) {
        if (!(err instanceof ClusterNotFoundError)) {
          deps.log.warn({ err, server: name }, 'retirement sweep: the cluster refused; retried next round');
          continue;
        }
      }
      await tx.delete(serverClaims).where(eq(serverClaims.serverName, name));
      await tx.delete(serverWakeAllowlist).where(eq(serverWakeAllowlist.serverName, name));
      await tx.delete(serverGuestWakes).where(eq(serverGuestWakes.serverName, name));
      await tx.delete(serverWakes).where(eq(serverWakes.serverName, name));
      await tx.delete(serverRetirements).where(eq(serverRetirements.serverName, name));
      await tx.insert(auditLog).values({
        at: deps.clock.now(),
        actor: 'system',
        action: retiring.delete ? 'server.retired_deleted' : 'server.retired_released',
        target: name,
        detail: { requested_by: retiring.requestedBy },
        requestId: null,
      });
      done.push(name);
    }
    return done;
  });
}

/** Runs the sweep every `retirement_sweep_seconds`; returns the function that stops it. */
export function startRetirementSweep(deps: SweepDeps): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const round = async () => {
    try {
      const done = await sweepRetirements(deps);
      if (done?.length) deps.log.info({ servers: done }, 'retirement sweep: servers retired');
    } catch (err) {
      deps.log.warn({ err }, 'retirement sweep failed; retried next round');
    }
    if (stopped) return;
    const seconds = await integerSetting(deps.database.db, SERVER_SETTINGS.retirementSweepSeconds).catch(() => SERVER_SETTINGS.retirementSweepSeconds.fallback);
    if (!stopped) timer = setTimeout(() => void round(), Math.max(1, seconds) * 1000).unref();
  };
  timer = setTimeout(() => void round(), 1000).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
