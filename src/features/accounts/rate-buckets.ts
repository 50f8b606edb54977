import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { rateLimitBuckets } from '../../db/schema/accounts.js';

/**
 * The token buckets of the attempt limits (`rate_limit_buckets`): the doors feature sets the
 * limits (`doors/rate-limit.ts`), this feature keeps the rows and sweeps the stale ones
 * (housekeeping.ts).
 */

export interface BucketVerdict {
  allowed: boolean;
  /** Whole seconds until one token is back (0 when allowed). */
  retryAfter: number;
}

/**
 * Takes one token from the bucket `key`, in one statement: the insert or the conflict update
 * computes the refill from the stored time, and the row lock of ON CONFLICT serialises concurrent
 * requests, on one replica or many. A refused request leaves the bucket untouched.
 */
export async function takeBucketToken(db: Queryable, key: string, now: Date, burst: number, perSecond: number): Promise<BucketVerdict> {
  const b = rateLimitBuckets;
  const refilled = sql`least(${burst}::float8, ${b.tokens} + greatest(0, extract(epoch from (${now.toISOString()}::timestamptz - ${b.updatedAt}))) * ${perSecond}::float8)`;
  const taken = await db
    .insert(b)
    .values({ key, tokens: burst - 1, updatedAt: now })
    .onConflictDoUpdate({
      target: b.key,
      set: { tokens: sql`${refilled} - 1`, updatedAt: sql`greatest(${b.updatedAt}, ${now.toISOString()}::timestamptz)` },
      setWhere: sql`${refilled} >= 1`,
    })
    .returning({ tokens: b.tokens });
  if (taken.length > 0) return { allowed: true, retryAfter: 0 };
  const [row] = await db
    .select({ tokens: sql<number>`${refilled}`.mapWith(Number) })
    .from(b)
    .where(sql`${b.key} = ${key}`);
  const missing = 1 - (row?.tokens ?? 0);
  return { allowed: false, retryAfter: Math.max(1, Math.ceil(missing / perSecond)) };
}

/** Returns a token taken for an attempt that was not made (refused by something else), up to `burst`. */
export async function giveBucketTokenBack(db: Queryable, key: string, burst: number): Promise<void> {
  const b = rateLimitBuckets;
  await db.update(b).set({ tokens: sql`least(${burst}::float8, ${b.tokens} + 1)` }).where(sql`${b.key} = ${key}`);
}
