import {
  heldBy,
  holdLease,
  LEASE_KEYS,
  leaseOf,
  leasePrefix,
  releaseLease,
  sweepLeases,
  takeLease,
  type HeldLease,
} from '../../../coordination/index.js';
import type { Queryable } from '../../../db/client.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import type { WorldsParts } from '../volumes/index.js';

/**
 * A world's lock: the lease `world:<server>` (src/coordination), held by the one job or file
 * operation that may touch the world's volume; `purpose` is its kind.
 */

/** How long a lock outlives its holder's last renewal. */
export const LOCK_LEASE_MS = 60_000;
/** How often a living holder renews (real time: the holder's process is alive or it is not). */
const LOCK_RENEW_MS = 15_000;

export type LockKind = 'backup' | 'restore' | 'unzip' | 'file_write' | 'upload' | 'export' | 'reclaim' | 'migration';

type LockDeps = Pick<Deps, 'database' | 'clock' | 'log'> & Partial<Pick<Deps, 'replica' | 'heartbeat'>>;

const key = LEASE_KEYS.world;

/**
 * The replicas whose world locks are free before they lapse: those this replica saw die (their
 * heartbeat stood still for its TTL), when world work runs in the service's own process (local
 * folders): it died with its replica. A cluster's world Jobs outlive the replica that started
 * them, so their locks are kept by whoever sees the Job run (adoption.ts) and lapse as before.
 */
export function deadLockTakers(deps: Partial<Pick<Deps & WorldsParts, 'heartbeat' | 'worlds'>>): string[] {
  return deps.worlds?.folders && deps.heartbeat ? deps.heartbeat.deadReplicas() : [];
}

/** Takes the world's lock for `holder`, or takes over one whose holder died (lapsed, or its replica is among `dead`). */
async function tryLock(db: Queryable, now: Date, serverName: string, holder: string, kind: LockKind, replica: string | undefined, dead: string[]): Promise<boolean> {
  return takeLease(db, now, { key: key(serverName), holder, purpose: kind, ttlMs: LOCK_LEASE_MS, ...(replica ? { replica } : {}) }, { dead });
}

/**
 * Holds the world's lock for `holder` (a Job's job id): renews it, or takes it when it is free or
 * lapsed, so two replicas cannot both win against a third holder.
 */
export async function keepLock(db: Queryable, now: Date, serverName: string, holder: string, kind: string): Promise<boolean> {
  return takeLease(db, now, { key: key(serverName), holder, purpose: kind, ttlMs: LOCK_LEASE_MS }, { orOwn: true });
}

export async function releaseLock(db: Queryable, serverName: string, holder: string): Promise<void> {
  await releaseLease(db, key(serverName), holder);
}

/** Whether the lock is held by `holder` and not free (its starter is alive; `dead`: see `deadLockTakers`). */
export async function heldFresh(db: Queryable, now: Date, serverName: string, holder: string, dead?: string[]): Promise<boolean> {
  return heldBy(db, now, key(serverName), holder, dead);
}

/** Removes locks whose holders stopped renewing or whose replica died (`dead`); resolves their holders. Every replica may run it. */
export async function sweepFreeLocks(db: Queryable, now: Date, dead?: string[]): Promise<string[]> {
  return (await sweepLeases(db, now, leasePrefix('world'), dead)).map((row) => row.holder);
}

/** Removes locks whose holders stopped renewing; every replica may run it. */
export async function sweepLapsedLocks(db: Queryable, now: Date): Promise<number> {
  return (await sweepFreeLocks(db, now)).length;
}

export async function lockHolderKind(db: Queryable, serverName: string): Promise<string | undefined> {
  return (await leaseOf(db, key(serverName)))?.purpose;
}

/** A held lock: renewed in the background until released. */
interface HeldLock extends Omit<HeldLease, 'key'> {
  readonly serverName: string;
}

export function maintenanceError(serverName: string): DomainError {
  return new DomainError('maintenance_in_progress', `${serverName}'s world is held by a restore, backup, unzip or file write.`);
}

/** How long a short file write waits, in arrival order, for the writes before it before answering 409. */
export const WRITE_WAIT_MS = 5_000;
/** The head of a replica's line asks the database again after this pause, doubling up to the ceiling. */
const POLL_FIRST_MS = 5;
const POLL_MAX_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A short write that waited its whole bound: the world is busy with other writes. */
function waitedTooLong(serverName: string, waitMs: number): DomainError {
  return new DomainError(
    'maintenance_in_progress',
    `${serverName}'s world is busy with other file writes; this one waited ${Math.round(waitMs / 100) / 10} s for its turn. Try again.`,
    { retryAfterSeconds: 1 },
  );
}

/**
 * Takes the lock or answers 409 maintenance_in_progress; the lease is renewed until release.
 * `queueBehind`: while a lock of that kind (a short file write) holds the world, wait for it, in
 * arrival order on this replica and at most `waitMs` (WRITE_WAIT_MS) in all, then 409.
 */
export async function holdWorld(
  deps: LockDeps & Partial<Pick<Deps & WorldsParts, 'worlds'>>,
  serverName: string,
  holder: string,
  kind: LockKind,
  options: { queueBehind?: LockKind; waitMs?: number } = {},
): Promise<HeldLock> {
  const { db } = deps.database;
  const dead = () => deadLockTakers(deps);
  let leave: (() => void) | undefined;
  if (options.queueBehind !== undefined) {
    leave = await queueForWorld(deps, serverName, holder, kind, options.queueBehind, options.waitMs ?? WRITE_WAIT_MS);
  } else {
    // Nobody is waited for; only a holder that let go between the two reads is tried again.
    while (!(await tryLock(db, deps.clock.now(), serverName, holder, kind, deps.replica, dead()))) {
      if ((await lockHolderKind(db, serverName)) !== undefined) throw maintenanceError(serverName);
    }
  }
  const held = holdLease({ db, clock: deps.clock, log: deps.log }, { key: key(serverName), holder, ttlMs: LOCK_LEASE_MS }, LOCK_RENEW_MS);
  if (!leave) return { serverName, holder, release: held.release, abandon: held.abandon };
  const done = leave;
  return {
    serverName,
    holder,
    release: async () => {
      try {
        await held.release();
      } finally {
        done();
      }
    },
    abandon: () => {
      held.abandon();
      done();
    },
  };
}

/**
 * Waits for this writer's turn on this replica (a first-come line per world), then for the
 * database's lock, which other replicas' writers take too: only the head of each replica's line
 * asks it, with a growing pause, until the writer's own deadline. Resolves with the function that
 * lets the next writer of this replica have its turn; a lock of another kind is 409 at once.
 */
async function queueForWorld(
  deps: LockDeps & Partial<Pick<Deps & WorldsParts, 'worlds'>>,
  serverName: string,
  holder: string,
  kind: LockKind,
  behind: LockKind,
  waitMs: number,
): Promise<(() => void) | undefined> {
  const { db } = deps.database;
  // Real time: the waiters are alive in this process or they are not.
  const deadline = Date.now() + waitMs;
  const leave = deps.worlds ? await deps.worlds.jobs.writeLines.enter(serverName, waitMs) : () => undefined;
  if (!leave) throw waitedTooLong(serverName, waitMs);
  try {
    for (let pause = POLL_FIRST_MS; ; pause = Math.min(pause * 2, POLL_MAX_MS)) {
      if (await tryLock(db, deps.clock.now(), serverName, holder, kind, deps.replica, deadLockTakers(deps))) return leave;
      const holderKind = await lockHolderKind(db, serverName);
      // No holder now: it let go between the two reads, so the world is free to try again.
      if (holderKind === undefined) continue;
      if (holderKind !== behind) throw maintenanceError(serverName);
      const left = deadline - Date.now();
      if (left <= 0) throw waitedTooLong(serverName, waitMs);
      await sleep(Math.min(pause, left));
    }
  } catch (err) {
    leave();
    throw err;
  }
}
