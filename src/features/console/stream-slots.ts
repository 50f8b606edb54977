import { and, count, eq, gt, like, lte, ne, or, isNull } from 'drizzle-orm';
import { escapeLike } from '../../db/like.js';
import { eventStreams } from '../../db/schema/console.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { lockUser } from '../accounts/index.js';

/** Event streams one account may hold open at once, on all replicas together. */
export const STREAMS_PER_ACCOUNT = 8;

type SlotDeps = Pick<Deps, 'database' | 'clock'> & Partial<Pick<Deps, 'replica'>>;

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
    await lockUser(tx, userId);
    await tx.delete(eventStreams).where(and(eq(eventStreams.userId, userId), lte(eventStreams.expiresAt, now)));
    const [open] = await tx.select({ n: count() }).from(eventStreams).where(and(eq(eventStreams.userId, userId), gt(eventStreams.expiresAt, now)));
    if ((open?.n ?? 0) >= STREAMS_PER_ACCOUNT) {
      throw new DomainError('rate_limited', `At most ${STREAMS_PER_ACCOUNT} event streams may be open at once; close one and retry.`, {
        retryAfterSeconds: Math.ceil(leaseMs / 1000),
      });
    }
    const [row] = await tx
      .insert(eventStreams)
      .values({ userId, kind, target, openedAt: now, expiresAt: new Date(now.getTime() + leaseMs), replica: deps.replica ?? null })
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

/**
 * At start-up, frees the stream slots this replica's previous life left (it died with its streams
 * open): every slot but this replica's on the embedded database, or those of replicas named
 * `<prefix>…` other than `current`. Resolves how many.
 */
export async function releasePreviousStreamSlots(deps: Pick<Deps, 'database'>, lives: { all: true; current: string } | { all?: false; prefix: string; current: string }): Promise<number> {
  const notCurrent = or(isNull(eventStreams.replica), ne(eventStreams.replica, lives.current));
  const where = lives.all ? notCurrent : and(notCurrent, like(eventStreams.replica, `${escapeLike(lives.prefix)}%`));
  const rows = await deps.database.db.delete(eventStreams).where(where).returning({ id: eventStreams.id });
  return rows.length;
}
