import { lt } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { linkCodes } from '../../db/schema/linking.js';
import { opLoginRequests } from '../../db/schema/op-login.js';
import type { Deps } from '../../deps.js';
import { HOUSEKEEPING_INTERVAL_MS } from '../accounts/housekeeping.js';

const HOUR = 60 * 60 * 1000;

/**
 * Deletes link codes and operator-login requests an hour past expiry (spent or not: neither can
 * be used any more; approvals and mismatches stay in the audit log). Idempotent, so every replica
 * may run it.
 */
export async function purgeIdentityCodes(db: Queryable, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - HOUR);
  await db.delete(linkCodes).where(lt(linkCodes.expiresAt, cutoff));
  await db.delete(opLoginRequests).where(lt(opLoginRequests.expiresAt, cutoff));
}

/** Runs the purge on the accounts housekeeping period until stopped; failures are logged, never thrown. */
export function startIdentityHousekeeping(deps: Pick<Deps, 'database' | 'clock' | 'log'>): () => void {
  const timer = setInterval(() => {
    purgeIdentityCodes(deps.database.db, deps.clock.now()).catch((err: unknown) => deps.log.warn({ err }, 'identity housekeeping failed'));
  }, HOUSEKEEPING_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
