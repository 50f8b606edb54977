import { and, eq, inArray, isNotNull, isNull, like, lte, ne, not, notExists, or, type SQL } from 'drizzle-orm';
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
  /** A replica's heartbeat, one per process life (heartbeat.ts): renewed while the process lives. */
  replica: (name: string) => `replica:${name}`,
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
  /** The replica taking it for `holder` (a world lock's job), when the holder is not the replica. */
  replica?: string;
}

export interface TakeOptions {
  /** Also succeed when `holder` already holds it (renewing it and keeping its `acquired_at`). */
  orOwn?: boolean;
  /**
   * Replicas this replica has seen die (heartbeat.ts `deadReplicas()`): a lease taken by one of
   * them for in-process work (its `replica`) is free at once, before it lapses.
   */
  dead?: readonly string[];
}

/**
 * THE rule of when a lease may be taken by someone else or swept: its lease has lapsed (a lease
 * until T has lapsed at T), or the replica that took it is among the `dead` (its heartbeat has
 * stood still for its TTL by the judging replica's own clock, or vanished).
 */
function freeLease(now: Date, dead: readonly string[] = []): SQL {
  const lapsed = lte(leases.leaseUntil, now);
  // `replica is not null and …`: a lease no replica took must be plainly not free (never NULL), also under `not(…)`.
  return dead.length > 0 ? or(lapsed, and(isNotNull(leases.replica), inArray(leases.replica, [...dead])))! : lapsed;
}

/** Takes the lease when nobody holds it or it is free (`freeLease`). Resolves whether it did. */
export async function takeLease(db: Queryable, now: Date, claim: LeaseClaim, options: TakeOptions = {}): Promise<boolean> {
  const leaseUntil = new Date(now.getTime() + claim.ttlMs);
  const free = freeLease(now, options.dead);
  const rows = await db
    .insert(leases)
    .values({ key: claim.key, holder: claim.holder, purpose: claim.purpose, acquiredAt: now, leaseUntil, replica: claim.replica ?? null })
    .onConflictDoUpdate({
      target: leases.key,
      set: options.orOwn
        ? { holder: claim.holder, purpose: claim.purpose, leaseUntil, replica: claim.replica ?? null }
        : { holder: claim.holder, purpose: claim.purpose, acquiredAt: now, leaseUntil, replica: claim.replica ?? null },
      setWhere: options.orOwn ? or(eq(leases.holder, claim.holder), free) : free,
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
  /** The replica that took it for `holder`, when the holder is not the replica itself. */
  replica: string | null;
}

/** The lease's row, lapsed or not, if there is one. */
/** A condition for a query of another table: no lease is held by the holder named in `holder` (a column or expression). */
export function noLeaseHeldBy(db: Queryable, holder: SQL): SQL {
  return notExists(db.select({ h: leases.holder }).from(leases).where(eq(leases.holder, holder)));
}

export async function leaseOf(db: Queryable, key: string): Promise<LeaseRow | undefined> {
  const [row] = await db
    .select({ holder: leases.holder, purpose: leases.purpose, acquiredAt: leases.acquiredAt, leaseUntil: leases.leaseUntil, replica: leases.replica })
    .from(leases)
    .where(eq(leases.key, key));
  return row;
}

/** Whether `holder` holds the lease and it is not free (`freeLease`): its holder is alive. */
export async function heldBy(db: Queryable, now: Date, key: string, holder: string, dead?: readonly string[]): Promise<boolean> {
  const rows = await db
    .select({ holder: leases.holder })
    .from(leases)
    .where(and(eq(leases.key, key), eq(leases.holder, holder), not(freeLease(now, dead))));
  return rows.length > 0;
}

/** Removes the free leases (`freeLease`) whose keys start with `prefix`; resolves their keys and holders. Any replica may run it. */
export async function sweepLeases(db: Queryable, now: Date, prefix: string, dead?: readonly string[]): Promise<{ key: string; holder: string }[]> {
  return db
    .delete(leases)
    .where(and(like(leases.key, `${escapeLike(prefix)}%`), freeLease(now, dead)))
    .returning({ key: leases.key, holder: leases.holder });
}

/** Removes the lapsed leases whose keys start with `prefix`; resolves their keys. Any replica may run it. */
export async function sweepLapsedLeases(db: Queryable, now: Date, prefix: string): Promise<string[]> {
  return (await sweepLeases(db, now, prefix)).map((row) => row.key);
}

/** What a start-up may release of its previous lives' leases: see `releasePreviousLives`. */
export type PreviousLives =
  /** Every lease but this replica's (the embedded database: one process opens it at a time). */
  | { all: true; current: string }
  /**
   * The leases held by a replica named `<prefix>…` other than `current` (same pod name), and with
   * `taken`, those it took for others (world locks of in-process jobs; a cluster Job's lock is
   * its own and is left to lapse).
   */
  | { all?: false; prefix: string; current: string; taken?: boolean };

/**
 * At start-up, releases what this replica's previous life held (it died without releasing): its
 * loops' rounds, its leadership and the world locks it took, at once rather than at their lapse.
 * Resolves the keys released.
 */
export async function releasePreviousLives(db: Queryable, lives: PreviousLives): Promise<string[]> {
  const notCurrent = and(ne(leases.holder, lives.current), or(isNull(leases.replica), ne(leases.replica, lives.current)));
  const where = lives.all
    ? notCurrent
    : and(notCurrent, or(like(leases.holder, `${escapeLike(lives.prefix)}%`), lives.taken ? like(leases.replica, `${escapeLike(lives.prefix)}%`) : undefined));
  const rows = await db.delete(leases).where(where).returning({ key: leases.key });
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
  /**
   * Lets go of the lease. Never rejects: a release the database refuses (it is down) is retried
   * in the background until it is recorded or the lease has lapsed by itself, so the work the
   * holder did is never reported as failed for the sake of its lock.
   */
  release(): Promise<void>;
  /** Stops renewing without releasing (the work was handed to whoever sees it end). */
  abandon(): void;
}

/** How often a release that the database refused is tried again. */
export const RELEASE_RETRY_MS = 500;

/**
 * Keeps a lease that was just taken alive: renewed every `renewMs` of real time (the holder's
 * process is alive or it is not), until release. A renewal that finds the lease taken over, or
 * that fails, is logged; the holder learns of it from its own next step.
 */
export function holdLease(deps: HoldDeps, claim: Pick<LeaseClaim, 'key' | 'holder' | 'ttlMs'>, renewMs: number, retryMs = RELEASE_RETRY_MS): HeldLease {
  const { key, holder, ttlMs } = claim;
  const timer = setInterval(() => {
    renewLease(deps.db, deps.clock.now(), key, holder, ttlMs).then(
      (held) => held || deps.log.warn({ lease: key, holder }, 'a lease was taken over while held'),
      (err: unknown) => deps.log.warn({ err, lease: key }, 'lease renewal failed'),
    );
  }, renewMs);
  timer.unref();
  let released: Promise<void> | undefined;
  const releaseLater = (firstErr: unknown) => {
    deps.log.warn({ err: firstErr, lease: key, holder }, 'lease release failed: retrying until the database records it');
    // After a lease's length without a renewal it has lapsed: anyone may take it, nothing to undo.
    const giveUpAt = Date.now() + ttlMs;
    const retry = () => {
      releaseLease(deps.db, key, holder).then(
        () => deps.log.warn({ lease: key, holder }, 'lease released after a failed release'),
        () => {
          if (Date.now() < giveUpAt) setTimeout(retry, retryMs).unref();
        },
      );
    };
    setTimeout(retry, retryMs).unref();
  };
  return {
    key,
    holder,
    abandon: () => clearInterval(timer),
    release: () =>
      (released ??= (async () => {
        clearInterval(timer);
        await releaseLease(deps.db, key, holder).catch(releaseLater);
      })()),
  };
}
