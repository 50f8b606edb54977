import type { Deps } from '../../deps.js';
import { reverifyBackups, sweepExpiredBackups } from './backup-service.js';
import { sweepExpiredExports } from './exports.js';
import { failOrphanedJobs } from './jobs.js';
import { sweepLapsedLocks } from './lock.js';
import { reclaimIdleWorlds } from './reclaim.js';
import type { JobDeps } from './run-job.js';

export const LOCK_SWEEP_MS = 30_000;
export const BACKUP_PASS_MS = 10 * 60_000;
/** A backup's archive is read back again once its last good read-back is this old. */
export const REVERIFY_AFTER_MS = 7 * 24 * 60 * 60_000;

/** One pass of the slow loop: expiry sweep, re-verification, idle reclaim. */
export async function backupPass(deps: JobDeps): Promise<void> {
  await sweepExpiredBackups(deps);
  await sweepExpiredExports(deps);
  await reverifyBackups(deps, REVERIFY_AFTER_MS);
  await reclaimIdleWorlds(deps);
}

/**
 * The worlds' background loops. Lapsed locks are swept on every replica (so a dead holder frees the
 * volume everywhere); the backup pass is safe on several replicas at once (each job takes the
 * world's lock, expiry and verification are idempotent). Failures are logged, never thrown.
 */
export function startWorldsHousekeeping(deps: Pick<Deps, 'database' | 'clock' | 'random' | 'worlds' | 'log' | 'cluster' | 'config'>): () => void {
  let passing = false;
  const locks = setInterval(() => {
    const now = deps.clock.now();
    sweepLapsedLocks(deps.database.db, now)
      .then(() => failOrphanedJobs(deps.database.db, now))
      .catch((err: unknown) => deps.log.warn({ err }, 'world lock sweep failed'));
  }, LOCK_SWEEP_MS);
  const backups = setInterval(() => {
    if (passing) return;
    passing = true;
    backupPass(deps)
      .catch((err: unknown) => deps.log.warn({ err }, 'backup pass failed'))
      .finally(() => {
        passing = false;
      });
  }, BACKUP_PASS_MS);
  locks.unref();
  backups.unref();
  return () => {
    clearInterval(locks);
    clearInterval(backups);
  };
}
