import { backgroundLoop, runOnOneReplica, type BackgroundTask, type LoopDeps } from '../../coordination/index.js';
import { tendWorldJobs } from './adoption.js';
import { reverifyBackups, sweepExpiredBackups } from './backups/index.js';
import { sweepExpiredExports } from './exports/index.js';
import { deadLockTakers, failOrphanedJobs, sweepFreeLocks, type JobDeps } from './jobs/index.js';
import { reclaimIdleWorlds } from './reclaim/index.js';
import { readWorldTimes, WORLD_SETTINGS } from './settings/index.js';
import { sweepAbandonedUploads } from './uploads/index.js';

const LOCK_SWEEP_MS = 30_000;
/** The default interval of the backup pass (setting `worlds_sweep_seconds`). */
const BACKUP_PASS_MS = WORLD_SETTINGS.worldsSweepSeconds.fallback * 1000;
const BACKUP_ROUND = 'backup_pass';

/** One pass of the slow loop: expiry sweep, re-verification, idle reclaim. */
async function backupPass(deps: JobDeps): Promise<void> {
  const { reverifyAfterMs } = await readWorldTimes(deps.database.db);
  await sweepExpiredBackups(deps);
  await sweepExpiredExports(deps);
  await reverifyBackups(deps, reverifyAfterMs);
  await reclaimIdleWorlds(deps);
}

/**
 * One round of the backup pass on one replica only: the replica that takes the round's lease runs
 * it, the others skip it. Resolves whether this replica (`holder`) ran it.
 */
export async function backupRound(deps: JobDeps, holder: string): Promise<boolean> {
  const { sweepMs } = await readWorldTimes(deps.database.db);
  return runOnOneReplica(loopDepsOf(deps, holder), BACKUP_ROUND, sweepMs, () => backupPass(deps));
}

const loopDepsOf = (deps: JobDeps, replica: string): LoopDeps => ({ db: deps.database.db, clock: deps.clock, log: deps.log, replica });

/**
 * One lock sweep, on every replica: world Jobs in the cluster keep their locks and the ended ones
 * whose starter is gone are settled, then lapsed locks and those of replicas seen dead (in-process
 * work: `deadLockTakers`) are removed and the jobs they held failed (not when the cluster could
 * not be read: a Job might still run).
 */
export async function lockSweep(deps: JobDeps): Promise<void> {
  const { runner } = deps.worlds;
  const tended = runner ? await tendWorldJobs(deps, runner) : true;
  const now = deps.clock.now();
  const freed = await sweepFreeLocks(deps.database.db, now, deadLockTakers(deps));
  if (tended) deps.worlds.jobs.ended(...(await failOrphanedJobs(deps.database.db, now, freed)));
}

/** A sweep as soon as the heartbeat judges a replica dead, so its jobs fail at once, not at the next round. */
function sweepOnDeath(deps: JobDeps): BackgroundTask {
  let unsubscribe: (() => void) | undefined;
  return {
    name: 'world_locks_of_dead_replicas',
    start: () => {
      unsubscribe = deps.heartbeat?.onDeath(() => {
        lockSweep(deps).catch((err: unknown) => deps.log.warn({ err }, 'the lock sweep after a replica died failed; the next round tries again'));
      });
    },
    stop: async () => unsubscribe?.(),
  };
}

/** How often abandoned upload sessions are swept. */
const UPLOAD_SWEEP_MS = 10 * 60 * 1000;

/**
 * The worlds' background loops. The lock sweep runs on every replica (so a dead holder frees the
 * volume everywhere); the sweep of abandoned uploads and each backup pass run on one replica (the
 * staged bytes live in the staging store every replica reads). First in the list, so last to stop:
 * the world jobs under way are waited for after the loops that start them have stopped.
 */
export function worldsTasks(deps: JobDeps, replica: string): BackgroundTask[] {
  const loop = loopDepsOf(deps, replica);
  return [
    { name: 'world_jobs', start: () => undefined, stop: () => deps.worlds.jobs.idle() },
    backgroundLoop(loop, { name: 'world_locks', replicas: 'every', intervalMs: LOCK_SWEEP_MS, firstAfterMs: 1_000, round: () => lockSweep(deps) }),
    sweepOnDeath(deps),
    backgroundLoop(loop, {
      name: BACKUP_ROUND,
      replicas: 'one',
      intervalMs: async () => (await readWorldTimes(deps.database.db)).sweepMs,
      firstAfterMs: BACKUP_PASS_MS,
      round: () => backupPass(deps),
    }),
    backgroundLoop(loop, { name: 'world_uploads', replicas: 'one', intervalMs: UPLOAD_SWEEP_MS, round: async () => void (await sweepAbandonedUploads(deps)) }),
  ];
}
