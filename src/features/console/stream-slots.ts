import { and, count, eq, gt, lte } from 'drizzle-orm';
import { users } from '../../db/schema/accounts.js';
import { eventStreams } from '../../db/schema/console.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';

/** Event streams one account may hold open at once, on all replicas together. */
export const STREAMS_PER_ACCOUNT = 8;

type SlotDeps = Pick<Deps, 'database' | 'clock'>;

export interface StreamSlot {
  /** Extends the lease (at each access re-check). */
  renew(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Takes one of the account's stream slots, or answers 429 rate_limited. The account's row is
 * locked first, so concurrent opens of one account are counted one after another.
 */
export async function takeStreamSlot(deps: SlotDeps, userId: string, kind: string, target: string, leaseMs: number): Promise<StreamSlot> {
  const { db } = deps.database;
  const id = await db.transaction(async (tx) => {
    const now = deps.clock.now();
    await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
    await tx.delete(eventStreams).where(and(eq(eventStreams.userId, userId), lte(eventStreams.expiresAt, now)));
    const [open] = await tx.select({ n: count() }).from(eventStreams).where(and(eq(eventStreams.userId, userId), gt(eventStreams.expiresAt, now)));
    if ((open?.n ?? 0) >= STREAMS_PER_ACCOUNT) {
      throw new DomainError('rate_limited', `At most ${STREAMS_PER_ACCOUNT} event streams may be open at once; close one and retry.`, {
        retryAfterSeconds: Math.ceil(leaseMs / 1000),
      });
    }
    const [row] = await tx
      .insert(eventStreams)
      .values({ userId, kind, target, openedAt: now, expiresAt: new Date(now.getTime() + leaseMs) })
      .returning({ id: eventStreams.id });
    return row!.id;
  });
  return {
    renew: async () => {
      await db.update(eventStreams).set({ expiresAt: new Date(deps.clock.now().getTime() + leaseMs) }).where(eq(eventStreams.id, id));
    },
    release: async () => {
      await db.delete(eventStreams).where(eq(eventStreams.id, id));
    },
  };
}
