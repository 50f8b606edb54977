import { lt } from 'drizzle-orm';
import { backgroundLoop, type BackgroundTask } from '../../coordination/index.js';
import type { Queryable } from '../../db/client.js';
import { linkCodes } from '../../db/schema/linking.js';
import type { Deps } from '../../deps.js';
import { HOUSEKEEPING_INTERVAL_MS } from '../accounts/index.js';

const HOUR = 60 * 60 * 1000;

/**
 * Deletes link codes and operator-login requests an hour past expiry (spent or not: neither can
 * be used any more; approvals and mismatches stay in the audit log). Idempotent.
 */
export async function purgeIdentityCodes(db: Queryable, now: Date, alsoPurge: readonly CodePurge[] = []): Promise<void> {
  const cutoff = new Date(now.getTime() - HOUR);
  await db.delete(linkCodes).where(lt(linkCodes.expiresAt, cutoff));
  for (const purge of alsoPurge) await purge(db, cutoff);
}

/** Another feature's purge of its codes that expired before `cutoff` (op-login's requests), handed in by the composition root. */
export type CodePurge = (db: Queryable, cutoff: Date) => Promise<void>;

/** The purge as a background task, on the accounts housekeeping period, on one replica. */
export function identityHousekeepingTask(deps: Pick<Deps, 'database' | 'clock' | 'log'>, replica: string, alsoPurge: readonly CodePurge[] = []): BackgroundTask {
  return backgroundLoop(
    { db: deps.database.db, clock: deps.clock, log: deps.log, replica },
    { name: 'identity_housekeeping', replicas: 'one', intervalMs: HOUSEKEEPING_INTERVAL_MS, round: () => purgeIdentityCodes(deps.database.db, deps.clock.now(), alsoPurge) },
  );
}
