import type { Deps } from '../../deps.js';
import { requireStopped } from './access.js';
import { finishJob, newId, recordJob, type JobKind } from './jobs.js';
import { JobHandedOver } from './job-runner.js';
import { holdWorld, maintenanceError, type LockKind } from './lock.js';
import { isErrno } from '../../lib/errno.js';

export type JobDeps = Pick<Deps, 'database' | 'clock' | 'random' | 'worlds' | 'log' | 'cluster' | 'config'>;

export interface JobOutcome {
  message?: string;
  backupId?: string;
}

/** A failure a job reports in its row (`message`), not a crash. */
export class JobFailure extends Error {
  override name = 'JobFailure';
}

/**
 * Starts a world job: takes the world's lock (409 maintenance_in_progress), checks that the server
 * is stopped while holding it (409 not_stopped), records the job and runs it in the background.
 * The lock is released when the job ends, whatever the outcome; if this process dies first, the
 * lease lapses and the lock frees itself.
 */
export async function startWorldJob(
  deps: JobDeps,
  job: { serverName: string; kind: JobKind; lockKind: LockKind; requestedBy?: string; backupId?: string; busy?: () => Promise<boolean> },
  run: (jobId: string) => Promise<JobOutcome | void>,
): Promise<{ jobId: string; done: Promise<void> }> {
  const jobId = newId(deps.random);
  const { busy, ...row } = job;
  const lock = await holdWorld(deps, job.serverName, jobId, job.lockKind);
  try {
    await requireStopped(deps, job.serverName);
    // A cluster Job that outlived its lock still has the volume: refuse as if it held the lock.
    if (busy && (await busy())) throw maintenanceError(job.serverName);
    await recordJob(deps, { ...row, id: jobId, lockHolder: jobId });
  } catch (err) {
    await lock.release();
    throw err;
  }
  const done = (async () => {
    let handedOver = false;
    try {
      const outcome = (await run(jobId)) ?? {};
      await finishJob(deps, jobId, { state: 'succeeded', ...outcome });
    } catch (err) {
      if (err instanceof JobHandedOver) {
        // The Job runs on; whichever replica sees it end settles it and frees the world.
        handedOver = true;
        lock.abandon();
        deps.log.info({ server: job.serverName, job: jobId }, 'world job left running for another replica to settle');
        return;
      }
      if (!(err instanceof JobFailure)) deps.log.error({ err, server: job.serverName, job: jobId, kind: job.kind }, 'world job failed');
      await finishJob(deps, jobId, { state: 'failed', message: jobMessage(err) }).catch((e: unknown) =>
        deps.log.error({ err: e, job: jobId }, 'could not record a failed world job'),
      );
    } finally {
      if (!handedOver) await lock.release().catch((err: unknown) => deps.log.warn({ err, job: jobId }, 'world lock release failed'));
    }
  })();
  deps.worlds.jobs.track(done);
  return { jobId, done };
}

/** What a job's row says of its failure: our own messages, a store's fullness, never a stack. */
function jobMessage(err: unknown): string {
  if (err instanceof JobFailure) return err.message;
  const name = (err as Error | undefined)?.name;
  if (name === 'BackupStoreFullError') return 'backup_store_full: the backup store is full';
  if (name === 'BackupCorruptError') return `backup_corrupt: ${(err as Error).message}`;
  if (isErrno(err, 'ENOSPC')) return 'volume_full: the world volume is full';
  return 'the job failed; the server log has the details';
}

