import { reverifyBackups, sweepExpiredBackups } from './backup-service.js';
import { sweepExpiredExports } from './exports.js';
import { tendWorldJobs } from './job-adoption.js';
import { failOrphanedJobs, newId } from './jobs.js';
import { KubernetesWorldJobRunner } from './kubernetes-job.js';
import { sweepLapsedLocks } from './lock.js';
import { reclaimIdleWorlds } from './reclaim.js';
import { inRound } from './rounds.js';
import type { JobDeps } from './run-job.js';
import { readWorldTimes, WORLD_SETTINGS } from './settings.js';
import { startUploadSweep } from './upload-sweep.js';

export const LOCK_SWEEP_MS = 30_000;
/** The default interval of the backup pass (setting `worlds_sweep_seconds`). */
export const BACKUP_PASS_MS = WORLD_SETTINGS.worldsSweepSeconds.fallback * 1000;
/** The default age after which a backup's archive is read back again (setting `backup_reverify_after_days`). */
export const REVERIFY_AFTER_MS = WORLD_SETTINGS.reverifyAfterDays.fallback * 24 * 60 * 60_000;
export const BACKUP_ROUND = 'backup_pass';

/** One pass of the slow loop: expiry sweep, re-verification, idle reclaim. */
export async function backupPass(deps: JobDeps): Promise<void> {
  const { reverifyAfterMs } = await readWorldTimes(deps.database.db);
  await sweepExpiredBackups(deps);
  await sweepExpiredExports(deps);
  await reverifyBackups(deps, reverifyAfterMs);
  await reclaimIdleWorlds(deps);
}

/**
 * One round of the backup pass on one replica only: the replica that takes the round's lease runs
 * it, the others skip it. Resolves whether this replica ran it.
 */
export async function backupRound(deps: JobDeps, holder: string): Promise<boolean> {
  const { sweepMs } = await readWorldTimes(deps.database.db);
  return inRound(
    { db: deps.database.db, now: () => deps.clock.now(), onRenewError: (err) => deps.log.warn({ err }, 'backup round lease renewal failed') },
    BACKUP_ROUND,
    holder,
    sweepMs,
    () => backupPass(deps),
  );
}

/**
 * One lock sweep, on every replica: world Jobs in the cluster keep their locks and the ended ones
 * whose starter is gone are settled, then lapsed locks are removed and the jobs they held failed
 * (not when the cluster could not be read: a Job might still run).
 */
export async function lockSweep(deps: JobDeps): Promise<void> {
  const { runner } = deps.worlds;
  const tended = runner instanceof KubernetesWorldJobRunner ? await tendWorldJobs(deps, runner.client) : true;
  const now = deps.clock.now();
  await sweepLapsedLocks(deps.database.db, now);
  if (tended) await failOrphanedJobs(deps.database.db, now);
}

/**
 * The worlds' background loops. The lock sweep runs on every replica (so a dead holder frees the
 * volume everywhere), and so does the sweep of abandoned uploads (each replica stages on its own
 * disk); each backup pass runs on one replica (`backupRound`). Failures are logged, never thrown.
 */
export function startWorldsHousekeeping(deps: JobDeps): () => void {
  const holder = newId(deps.random);
  let stopped = false;
  let backupTimer: NodeJS.Timeout | undefined;
  const sweep = () =>
    lockSweep(deps).catch((err: unknown) => deps.log.warn({ err }, 'world lock sweep failed'));
  const locks = setInterval(() => void sweep(), LOCK_SWEEP_MS);
  locks.unref();
  const firstSweep = setTimeout(() => void sweep(), 1_000);
  firstSweep.unref();
  const round = async () => {
    await backupRound(deps, holder).catch((err: unknown) => deps.log.warn({ err }, 'backup pass failed'));
    if (stopped) return;
    const { sweepMs } = await readWorldTimes(deps.database.db).catch(() => ({ sweepMs: BACKUP_PASS_MS }));
    if (!stopped) backupTimer = setTimeout(() => void round(), sweepMs).unref();
  };
  backupTimer = setTimeout(() => void round(), BACKUP_PASS_MS).unref();
  const stopUploadSweep = startUploadSweep(deps);
  return () => {
    stopped = true;
    stopUploadSweep();
    clearInterval(locks);
    clearTimeout(firstSweep);
    clearTimeout(backupTimer);
  };
}
