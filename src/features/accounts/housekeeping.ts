import { lt } from 'drizzle-orm';
import { backgroundLoop, type BackgroundTask } from '../../coordination/index.js';
import type { Queryable } from '../../db/client.js';
import { emailCodeFailures, emailCodes, rateLimitBuckets, sessions } from '../../db/schema/accounts.js';
import type { Deps } from '../../deps.js';
import { DOOR_FAILURE_WINDOW_MS } from './codes/index.js';

const HOUR = 60 * 60 * 1000;
export const HOUSEKEEPING_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Deletes rows that can no longer matter: sessions a day past expiry, spent or expired codes,
 * failures outside the lock window, and door buckets that have long refilled. Idempotent.
 */
export async function purgeAccountState(db: Queryable, now: Date): Promise<void> {
  const ago = (ms: number) => new Date(now.getTime() - ms);
  await db.delete(sessions).where(lt(sessions.expiresAt, ago(24 * HOUR)));
  await db.delete(emailCodes).where(lt(emailCodes.expiresAt, ago(HOUR)));
  await db.delete(emailCodeFailures).where(lt(emailCodeFailures.at, ago(DOOR_FAILURE_WINDOW_MS)));
  await db.delete(rateLimitBuckets).where(lt(rateLimitBuckets.updatedAt, ago(HOUR)));
}

/** The purge as a background task: every ten minutes, on one replica. */
export function accountHousekeepingTask(deps: Pick<Deps, 'database' | 'clock' | 'log'>, replica: string): BackgroundTask {
  return backgroundLoop(
    { db: deps.database.db, clock: deps.clock, log: deps.log, replica },
    { name: 'accounts_housekeeping', replicas: 'one', intervalMs: HOUSEKEEPING_INTERVAL_MS, round: () => purgeAccountState(deps.database.db, deps.clock.now()) },
  );
}
