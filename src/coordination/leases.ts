import { and, eq, like, lte, or } from 'drizzle-orm';
import type { Queryable } from '../db/client.js';
import { escapeLike } from '../db/like.js';
import { leases } from '../db/schema/coordination.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';

/**
 * Leases: the one way replicas agree on who holds something (a world, a background loop's round,
 * the controller). Each is a row taken in ONE statement, so of several replicas asking at once
 * exactly one wins; a holder that dies stops renewing and its lease lapses by itself.
 */

/** Every kind of lease and its key, in one list. */
export const LEASE_KEYS = {
  /** A world's volume, held by one job or file operation at a time (src/features/worlds). */
  world: (serverName: string) => `world:${serverName}`,
  /** One round of a background loop that runs on one replica at a time (loops.ts). */
  loop: (name: string) => `loop:${name}`,
  /** The leadership of the control plane's controller (loops.ts `Leadership`). */
  leader: (name: string) => `leader:${name}`,
  /** A running node-control task, held by the replica that advances it (src/features/nodes). */
  nodeTask: (id: string) => `node-task:${id}`,
} as const;

/** The prefix every key of one kind starts with (for a sweep of that kind). */
export const leasePrefix = (kind: keyof typeof LEASE_KEYS) => LEASE_KEYS[kind]('');

export interface LeaseClaim {
  key: string;
  holder: string;
  /** What the holder does with it (a world lock's kind, a loop's name). */
  purpose: string;
  /** The lease reaches this far past `now`. */
  ttlMs: number;
}

export interface TakeOptions {
  /** Also succeed when `holder` already holds it (renewing it and keeping its `acquired_at`). */
  orOwn?: boolean;
}

/** Takes the lease when nobody holds it or its holder's lease has lapsed. Resolves whether it did. */
export async function takeLease(db: Queryable, now: Date, claim: LeaseClaim, options: TakeOptions = {}): Promise<boolean> {
  const leaseUntil = new Date(now.getTime() + claim.ttlMs);
  // A lease until T has lapsed at T.
  const lapsed = lte(leases.leaseUntil, now);
  const rows = await db
    .insert(leases)
    .values({ key: claim.key, holder: claim.holder, purpose: claim.purpose, acquiredAt: now, leaseUntil })
    .onConflictDoUpdate({
      target: leases.key,
      set: options.orOwn ? { holder: claim.holder, purpose: claim.purpose, leaseUntil } : { holder: claim.holder, purpose: claim.purpose, acquiredAt: now, leaseUntil },
      setWhere: options.orOwn ? or(eq(leases.holder, claim.holder), lapsed) : lapsed,
    })
    .returning({ holder: leases.holder });
  return rows.length > 0;
}

/**
 * Moves the holder's lease to `now + ttlMs` (never shortens it). Resolves false when the holder no
 * longer holds it: somebody took it over after it lapsed.
 */
export async function renewLease(db: Queryable, now: Date, key: string, holder: string, ttlMs: number): Promise<boolean> {
  const until = new Date(now.getTime() + ttlMs);
  const rows = await db
    .update(leases)
    .set({ leaseUntil: until })
    .where(and(eq(leases.key, key), eq(leases.holder, holder), lte(leases.leaseUntil, until)))
    .returning({ holder: leases.holder });
  if (rows.length > 0) return true;
  // Already further ahead (a round taken for a long interval) counts as held.
  return (await leaseOf(db, key))?.holder === holder;
}

/** Lets go of the lease if `holder` still holds it. */
export async function releaseLease(db: Queryable, key: string, holder: string): Promise<void> {
  await db.delete(leases).where(and(eq(leases.key, key), eq(leases.holder, holder)));
}

export interface LeaseRow {
  holder: string;
  purpose: string;
  acquiredAt: Date;
  leaseUntil: Date;
}

/** The lease's row, lapsed or not, if there is one. */
export async function leaseOf(db: Queryable, key: string): Promise<LeaseRow | undefined> {
  const [row] = await db
    .select({ holder: leases.holder, purpose: leases.purpose, acquiredAt: leases.acquiredAt, leaseUntil: leases.leaseUntil })
    .from(leases)
    .where(eq(leases.key, key));
  return row;
}

/** Removes the lapsed leases whose keys start with `prefix`; resolves their keys. Any replica may run it. */
export async function sweepLapsedLeases(db: Queryable, now: Date, prefix: string): Promise<string[]> {
  const rows = await db
    .delete(leases)
    .where(and(like(leases.key, `${escapeLike(prefix)}%`), lte(leases.leaseUntil, now)))
    .returning({ key: leases.key });
  return rows.map((row) => row.key);
}

export interface HoldDeps {
  db: Queryable;
  clock: Clock;
  log: Pick<Logger, 'warn'>;
}

/** A lease this process holds: renewed in the background until released or abandoned. */
export interface HeldLease {
  readonly key: string;
  readonly holder: string;
  release(): Promise<void>;
  /** Stops renewing without releasing (the work was handed to whoever sees it end). */
  abandon(): void;
}

/**
 * Keeps a lease that was just taken alive: renewed every `renewMs` of real time (the holder's
 * process is alive or it is not), until release. A renewal that finds the lease taken over, or
 * that fails, is logged; the holder learns of it from its own next step.
 */
export function holdLease(deps: HoldDeps, claim: Pick<LeaseClaim, 'key' | 'holder' | 'ttlMs'>, renewMs: number): HeldLease {
  const { key, holder, ttlMs } = claim;
  const timer = setInterval(() => {
    renewLease(deps.db, deps.clock.now(), key, holder, ttlMs).then(
      (held) => held || deps.log.warn({ lease: key, holder }, 'a lease was taken over while held'),
      (err: unknown) => deps.log.warn({ err, lease: key }, 'lease renewal failed'),
    );
  }, renewMs);
  timer.unref();
  let released: Promise<void> | undefined;
  return {
    key,
    holder,
    abandon: () => clearInterval(timer),
    release: () =>
      (released ??= (async () => {
        clearInterval(timer);
        await releaseLease(deps.db, key, holder);
      })()),
  };
}
