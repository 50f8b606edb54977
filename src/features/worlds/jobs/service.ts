import { BackupStoreFullError, type BackupStore } from '../../../adapters/backup-store/types.js';
import { JobHandedOver, type StepFailure, type StepOutcome, type WorldJobInCluster, type WorldJobPlan, type WorldJobRunner } from '../../../adapters/cluster/world-jobs.js';
import type { Deps } from '../../../deps.js';
import { isErrno } from '../../../lib/errno.js';
import { DomainError } from '../../../lib/errors.js';
import { findUnavailable } from '../../../lib/unavailable.js';
import type { Logger } from '../../../lib/logger.js';
import { runVolumeStep, type WorldFolders } from '../volumes/index.js';
import { requireStopped, requireWorld, type Caller } from './access.js';
import { holdWorld, maintenanceError, type LockKind } from './lock.js';
import { finishJob, jobsOf, newId, recordJob, type JobKind, type JobRow } from './records.js';
import type { WorldsParts } from '../volumes/index.js';
import type { ServersParts } from '../../servers/index.js';

export type JobDeps = Pick<Deps & WorldsParts, 'database' | 'clock' | 'random' | 'worlds' | 'log' | 'cluster' | 'config' | 'staging'> & Partial<Pick<Deps, 'shutdown' | 'heartbeat'>> & ServersParts;
/** What recording a step's outcome needs: whichever replica does it, from the job's plan alone. */
export type SettleDeps = Pick<Deps & WorldsParts, 'database' | 'clock' | 'worlds' | 'log'> & Partial<Pick<Deps, 'shutdown'>>;

export interface JobOutcome {
  message?: string;
  backupId?: string;
}

/** A failure a job reports in its row (`message`), not a crash. */
export class JobFailure extends Error {
  override name = 'JobFailure';
}

/** The failure a step reported, as the job's message: its code first. */
export const stepFailed = (outcome: StepFailure) => new JobFailure(`${outcome.code}: ${outcome.message}`);

/** The first and the longest pause between two tries of recording a job's outcome. */
const RECORD_RETRY_FIRST_MS = 250;
const RECORD_RETRY_MAX_MS = 5_000;

/**
 * Records what a job did, again and again while the database is away, until it is recorded: a
 * restore that replaced the world must not be reported failed because its last update fell into
 * an outage. Gives up only when the service stops (the job row is then judged by the next life).
 * Meanwhile the job's lock is still renewed, so no replica takes the job for an orphan.
 */
export async function untilRecorded<T>(deps: Pick<Deps, 'log'> & Partial<Pick<Deps, 'shutdown'>>, jobId: string, record: () => Promise<T>): Promise<T> {
  for (let pause = RECORD_RETRY_FIRST_MS, tries = 1; ; pause = Math.min(pause * 2, RECORD_RETRY_MAX_MS), tries++) {
    try {
      return await record();
    } catch (err) {
      if (!findUnavailable(err) || deps.shutdown?.aborted) throw err;
      if (tries === 1) deps.log.warn({ err, job: jobId }, 'a world job\'s outcome could not be recorded: retrying until the database answers');
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** The simulated cluster's volumes are local folders: the step runs in this process. */
class InProcessJobRunner implements WorldJobRunner {
  readonly kind = 'in-process' as const;

  constructor(
    private readonly folders: WorldFolders,
    private readonly store: () => BackupStore,
    private readonly log: Pick<Logger, 'error'>,
    /** Aborted when this replica loses its heartbeat: the step stops before another replica may take the world over. */
    private readonly whileAlive?: () => AbortSignal,
  ) {}

  async run(plan: WorldJobPlan): Promise<StepOutcome> {
    const folder = await this.folders.folder(plan.serverName, plan.volume?.claim);
    const signal = this.whileAlive?.();
    return runVolumeStep(this.store(), folder, plan.step, {
      tag: plan.jobId,
      ...(signal ? { signal } : {}),
      onError: (err) => this.log.error({ err, server: plan.serverName, job: plan.jobId, kind: plan.kind }, 'world job step failed'),
    });
  }

  async busy(): Promise<boolean> {
    return false; // every in-process job holds the lock for its whole run
  }

  exists(serverName: string): Promise<boolean> {
    return this.folders.exists(serverName);
  }

  release(serverName: string, claim?: string): Promise<void> {
    return this.folders.release(serverName, claim);
  }

  async listJobs(): Promise<WorldJobInCluster[]> {
    return []; // none outlives this process
  }
}

/**
 * The runner of this service's world jobs, or 503: on Kubernetes without an S3 backup store no
 * Job could reach the store, and a process without local folders cannot run one itself.
 */
export function runnerOf(deps: Pick<Deps & WorldsParts, 'worlds' | 'log'> & Partial<Pick<Deps, 'heartbeat'>>): WorldJobRunner {
  const { worlds, heartbeat } = deps;
  if (worlds.runner) return worlds.runner;
  if (worlds.folders) return new InProcessJobRunner(worlds.folders, () => worlds.store, deps.log, heartbeat && (() => heartbeat.whileAlive()));
  throw new DomainError('unavailable', worlds.unavailable ?? 'World jobs cannot run from this service.');
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
      await untilRecorded(deps, jobId, () => finishJob(deps, jobId, { state: 'succeeded', ...outcome }));
    } catch (err) {
      if (err instanceof JobHandedOver) {
        // The Job runs on; whichever replica sees it end settles it and frees the world.
        handedOver = true;
        lock.abandon();
        deps.log.info({ server: job.serverName, job: jobId }, 'world job left running for another replica to settle');
        return;
      }
      if (!(err instanceof JobFailure)) deps.log.error({ err, server: job.serverName, job: jobId, kind: job.kind }, 'world job failed');
      await untilRecorded(deps, jobId, () => finishJob(deps, jobId, { state: 'failed', message: jobMessage(err) })).catch((e: unknown) =>
        deps.log.error({ err: e, job: jobId }, 'could not record a failed world job'),
      );
    } finally {
      if (!handedOver) await lock.release().catch((err: unknown) => deps.log.warn({ err, job: jobId }, 'world lock release failed'));
      if (!handedOver) deps.worlds.jobs.ended(jobId);
    }
  })();
  deps.worlds.jobs.track(done);
  return { jobId, done };
}

/** What a job's row says of its failure: our own messages, a store's fullness, never a stack. */
function jobMessage(err: unknown): string {
  if (err instanceof JobFailure) return err.message;
  if (err instanceof BackupStoreFullError) return 'backup_store_full: the backup store is full';
  if (isErrno(err, 'ENOSPC')) return 'volume_full: the world volume is full';
  return 'the job failed; the server log has the details';
}

/** What runs or ran on a world, newest first (owner, staff, or a member with backups.read). */
export async function listServerJobs(deps: Pick<Deps, 'database' | 'cluster' | 'config'> & ServersParts, serverName: string, caller: Caller): Promise<JobRow[]> {
  await requireWorld(deps, serverName, caller, 'backups.read');
  return jobsOf(deps.database.db, serverName);
}
