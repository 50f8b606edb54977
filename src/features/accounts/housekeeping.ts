import { lt } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { emailCodeFailures, emailCodes, rateLimitBuckets, sessions } from '../../db/schema/accounts.js';
import type { Deps } from '../../deps.js';
import { reapExpiredCeremonies } from '../passkeys/ceremonies.js';
import { DOOR_FAILURE_WINDOW_MS } from './email-codes.js';

const HOUR = 60 * 60 * 1000;
export const HOUSEKEEPING_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Deletes rows that can no longer matter: sessions a day past expiry, spent or expired codes,
 * failures outside the lock window, and door buckets that have long refilled. Idempotent, so
 * every replica may run it.
 */
export async function purgeAccountState(db: Queryable, now: Date): Promise<void> {
  const ago = (ms: number) => new Date(now.getTime() - ms);
  await db.delete(sessions).where(lt(sessions.expiresAt, ago(24 * HOUR)));
  await db.delete(emailCodes).where(lt(emailCodes.expiresAt, ago(HOUR)));
  await db.delete(emailCodeFailures).where(lt(emailCodeFailures.at, ago(DOOR_FAILURE_WINDOW_MS)));
  await db.delete(rateLimitBuckets).where(lt(rateLimitBuckets.updatedAt, ago(HOUR)));
  await reapExpiredCeremonies(db, now);
}

/** Runs the purge every ten minutes until stopped; failures are logged, never thrown. */
export function startAccountHousekeeping(deps: Pick<Deps, 'database' | 'clock' | 'log'>): () => void {
  const timer = setInterval(() => {
    purgeAccountState(deps.database.db, deps.clock.now()).catch((err: unknown) => deps.log.warn({ err }, 'accounts housekeeping failed'));
  }, HOUSEKEEPING_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
