import { and, eq, lt } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { worldLocks } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';

/** How long a lock outlives its holder's last renewal. */
export const LOCK_LEASE_MS = 60_000;
/** How often a living holder renews (real time: the holder's process is alive or it is not). */
export const LOCK_RENEW_MS = 15_000;

export type LockKind = 'backup' | 'restore' | 'unzip' | 'file_write' | 'upload' | 'export' | 'reclaim';

type LockDeps = Pick<Deps, 'database' | 'clock' | 'log'>;

/**
 * Takes the world's lock for `holder`, or takes over one whose lease lapsed (its holder died).
 * One statement, so two replicas racing for the same volume cannot both win.
 */
export async function tryLock(db: Queryable, now: Date, serverName: string, holder: string, kind: LockKind): Promise<boolean> {
  const leaseUntil = new Date(now.getTime() + LOCK_LEASE_MS);
  const rows = await db
    .insert(worldLocks)
    .values({ serverName, holder, kind, acquiredAt: now, leaseUntil })
    .onConflictDoUpdate({
      target: worldLocks.serverName,
      set: { holder, kind, acquiredAt: now, leaseUntil },
      setWhere: lt(worldLocks.leaseUntil, now),
    })
    .returning({ holder: worldLocks.holder });
  return rows.length > 0;
}

export async function renewLock(db: Queryable, now: Date, serverName: string, holder: string): Promise<boolean> {
  const rows = await db
    .update(worldLocks)
    .set({ leaseUntil: new Date(now.getTime() + LOCK_LEASE_MS) })
    .where(and(eq(worldLocks.serverName, serverName), eq(worldLocks.holder, holder)))
    .returning({ holder: worldLocks.holder });
  return rows.length > 0;
}

export async function releaseLock(db: Queryable, serverName: string, holder: string): Promise<void> {
  await db.delete(worldLocks).where(and(eq(worldLocks.serverName, serverName), eq(worldLocks.holder, holder)));
}

/** Whether a job holds the world's volume (the servers feature refuses wakes while it does). */
export async function worldLockHeld(db: Queryable, serverName: string): Promise<boolean> {
  const [row] = await db.select({ holder: worldLocks.holder }).from(worldLocks).where(eq(worldLocks.serverName, serverName));
  return row !== undefined;
}

/** Removes locks whose holders stopped renewing; every replica may run it. */
export async function sweepLapsedLocks(db: Queryable, now: Date): Promise<number> {
  const rows = await db.delete(worldLocks).where(lt(worldLocks.leaseUntil, now)).returning({ serverName: worldLocks.serverName });
  return rows.length;
}

export async function lockHolderKind(db: Queryable, serverName: string): Promise<string | undefined> {
  const [row] = await db.select({ kind: worldLocks.kind }).from(worldLocks).where(eq(worldLocks.serverName, serverName));
  return row?.kind;
}

/** A held lock: renewed in the background until released. */
export interface HeldLock {
  readonly serverName: string;
  readonly holder: string;
  release(): Promise<void>;
  /** Stops renewing without releasing (a job handed over to whichever replica sees it end). */
  abandon(): void;
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
  for (let tries = 0; !(await tryLock(db, deps.clock.now(), serverName, holder, kind)); tries++) {
    const holderKind = await lockHolderKind(db, serverName);
    // No holder now: it let go between the two reads, so the world is free to try again.
    const released = holderKind === undefined;
    const queued = options.queueBehind !== undefined && holderKind === options.queueBehind;
    if (tries >= QUEUE_TRIES || !(released || queued)) throw maintenanceError(serverName);
    if (queued) await new Promise((resolve) => setTimeout(resolve, QUEUE_PAUSE_MS));
  }
  const timer = setInterval(() => {
    renewLock(db, deps.clock.now(), serverName, holder).then(
      (held) => held || deps.log.warn({ server: serverName, holder }, 'world lock was taken over while held'),
      (err: unknown) => deps.log.warn({ err, server: serverName }, 'world lock renewal failed'),
    );
  }, LOCK_RENEW_MS);
  timer.unref();
  let released: Promise<void> | undefined;
  return {
    serverName,
    holder,
    abandon: () => clearInterval(timer),
    release: () =>
      (released ??= (async () => {
        clearInterval(timer);
        await releaseLock(db, serverName, holder);
      })()),
  };
}

