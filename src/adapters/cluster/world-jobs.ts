import { z } from 'zod';
import type { BackupStore } from '../../adapters/backup-store/types.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { WorldFolders } from './runtime.js';
import { runVolumeStep, volumeStepSchema, type StepOutcome } from './volume-ops.js';

/**
 * Everything needed to run a world job's step and to record its outcome afterwards, as plain data:
 * a Kubernetes Job carries it (an annotation) so that any replica can settle a Job whose starter
 * died.
 */
export const worldJobPlanSchema = z.strictObject({
  jobId: z.uuid(),
  serverName: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
  kind: z.enum(['backup', 'restore', 'export', 'reclaim']),
  step: volumeStepSchema,
  /** backup, reclaim: the row being made; restore: the backup restored. */
  backupId: z.uuid().optional(),
  /** A restore's `pre_restore` snapshot: its backup row and its own job row. */
  snapshot: z.strictObject({ backupId: z.uuid(), jobId: z.uuid() }).optional(),
  exportTicket: z.uuid().optional(),
});
export type WorldJobPlan = z.infer<typeof worldJobPlanSchema>;

/** Runs a world job's step on the server's volume, wherever that volume can be reached. */
export interface WorldJobRunner {
  readonly kind: 'in-process' | 'kubernetes';
  /** Runs the step to its end. Rejects with JobHandedOver when this process stops waiting first. */
  run(plan: WorldJobPlan): Promise<StepOutcome>;
  /** Whether a job of another holder still runs on the volume (a Job that outlived its lock). */
  busy(serverName: string): Promise<boolean>;
  /** Whether the server has a world volume at all. */
  exists(serverName: string): Promise<boolean>;
  /** Gives the volume back (idle reclaim, after a verified archive). */
  release(serverName: string): Promise<void>;
}

/** The process stopped waiting for a job that goes on running (shutdown): another replica settles it. */
export class JobHandedOver extends Error {
  override name = 'JobHandedOver';
}

/** The simulated cluster's volumes are local folders: the step runs in this process. */
export class InProcessJobRunner implements WorldJobRunner {
  readonly kind = 'in-process' as const;

  constructor(
    private readonly folders: WorldFolders,
    private readonly store: () => BackupStore,
    private readonly log: Pick<Logger, 'error'>,
  ) {}

  async run(plan: WorldJobPlan): Promise<StepOutcome> {
    const folder = await this.folders.folder(plan.serverName);
    return runVolumeStep(this.store(), folder, plan.step, {
      tag: plan.jobId,
      onError: (err) => this.log.error({ err, server: plan.serverName, job: plan.jobId, kind: plan.kind }, 'world job step failed'),
    });
  }

  async busy(): Promise<boolean> {
    return false; // every in-process job holds the lock for its whole run
  }

  exists(serverName: string): Promise<boolean> {
    return this.folders.exists(serverName);
  }

  release(serverName: string): Promise<void> {
    return this.folders.release(serverName);
  }
}

/**
 * The runner of this service's world jobs, or 503: on Kubernetes without an S3 backup store no
 * Job could reach the store, and a process without local folders cannot run one itself.
 */
export function runnerOf(deps: Pick<Deps, 'worlds' | 'log'>): WorldJobRunner {
  const { worlds } = deps;
  if (worlds.runner) return worlds.runner;
  if (worlds.folders) return new InProcessJobRunner(worlds.folders, () => worlds.store, deps.log);
  throw new DomainError('unavailable', worlds.unavailable ?? 'World jobs cannot run from this service.');
}
