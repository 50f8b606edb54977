import {
  holdLease,
  LEASE_KEYS,
  leaseOf,
  leasePrefix,
  releaseLease,
  sweepLapsedLeases,
  takeLease,
  type HeldLease,
} from '../../../coordination/index.js';
import type { Queryable } from '../../../db/client.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';

/**
 * A world's lock: the lease `world:<server>` (src/coordination), held by the one job or file
 * operation that may touch the world's volume; `purpose` is its kind.
 */

/** How long a lock outlives its holder's last renewal. */
export const LOCK_LEASE_MS = 60_000;
/** How often a living holder renews (real time: the holder's process is alive or it is not). */
const LOCK_RENEW_MS = 15_000;

export type LockKind = 'backup' | 'restore' | 'unzip' | 'file_write' | 'upload' | 'export' | 'reclaim' | 'migration';

type LockDeps = Pick<Deps, 'database' | 'clock' | 'log'> & Partial<Pick<Deps, 'replica'>>;

const key = LEASE_KEYS.world;

/** Takes the world's lock for `holder`, or takes over one whose lease lapsed (its holder died). */
async function tryLock(db: Queryable, now: Date, serverName: string, holder: string, kind: LockKind, replica?: string): Promise<boolean> {
  return takeLease(db, now, { key: key(serverName), holder, purpose: kind, ttlMs: LOCK_LEASE_MS, ...(replica ? { replica } : {}) });
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

/** Whether the lock is held by `holder` with a lease still running (its starter is alive). */
export async function heldFresh(db: Queryable, now: Date, serverName: string, holder: string): Promise<boolean> {
  const row = await leaseOf(db, key(serverName));
  return row !== undefined && row.holder === holder && row.leaseUntil.getTime() > now.getTime();
}

/** Removes locks whose holders stopped renewing; every replica may run it. */
export async function sweepLapsedLocks(db: Queryable, now: Date): Promise<number> {
  return (await sweepLapsedLeases(db, now, leasePrefix('world'))).length;
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

/** How long a short file operation waits for another one to finish before answering 409. */
const QUEUE_TRIES = 200;
const QUEUE_PAUSE_MS = 10;

/**
 * Takes the lock or answers 409 maintenance_in_progress; the lease is renewed until release.
 * `queueBehind`: while a lock of that kind (a short file write) holds the world, wait for it in
 * real time (a second or two at most), so that concurrent writers see each other's result.
 */
export async function holdWorld(
  deps: LockDeps,
  serverName: string,
  holder: string,
  kind: LockKind,
  options: { queueBehind?: LockKind } = {},
): Promise<HeldLock> {
  const { db } = deps.database;
  for (let tries = 0; !(await tryLock(db, deps.clock.now(), serverName, holder, kind, deps.replica)); tries++) {
    const holderKind = await lockHolderKind(db, serverName);
    // No holder now: it let go between the two reads, so the world is free to try again.
    const released = holderKind === undefined;
    const queued = options.queueBehind !== undefined && holderKind === options.queueBehind;
    if (tries >= QUEUE_TRIES || !(released || queued)) throw maintenanceError(serverName);
    if (queued) await new Promise((resolve) => setTimeout(resolve, QUEUE_PAUSE_MS));
  }
  const held = holdLease({ db, clock: deps.clock, log: deps.log }, { key: key(serverName), holder, ttlMs: LOCK_LEASE_MS }, LOCK_RENEW_MS);
  return { serverName, holder, release: held.release, abandon: held.abandon };
}
