import { z } from 'zod';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { WorldFileOps } from './world-files.js';

/**
 * What a world job does on the volume, as plain data: the same step runs in this process on a
 * local folder (simulated cluster) or in a Kubernetes Job's pod by `src/cli/world-job.ts` with the
 * claim mounted. Keys are the store's names, made by the service, never by a client.
 */
export const volumeStepSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('backup'), key: z.string() }),
  z.strictObject({ op: z.literal('restore'), key: z.string(), sha256: z.string().regex(/^[a-f0-9]{64}$/), snapshotKey: z.string().optional() }),
  z.strictObject({ op: z.literal('export'), key: z.string(), path: z.string().max(4096) }),
]);
export type VolumeStep = z.infer<typeof volumeStepSchema>;

const archiveFactsSchema = z.strictObject({
  sha256: z.string().regex(/^[a-f0-9]{64}$/),
  size: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  /** The archive read back from the store hashed to `sha256`. */
  verified: z.boolean(),
});
export type ArchiveFacts = z.infer<typeof archiveFactsSchema>;

/** The codes a step reports; the job's message starts with the code. */
export const STEP_CODES = ['backup_store_full', 'volume_full', 'backup_corrupt', 'not_found', 'maintenance_in_progress', 'failed'] as const;
export type StepCode = (typeof STEP_CODES)[number];

/** A step's outcome: small JSON, so it fits a container's termination message (4 KiB). */
export const stepOutcomeSchema = z.union([
  z.strictObject({ ok: z.literal(true), archive: archiveFactsSchema.optional(), snapshot: archiveFactsSchema.optional() }),
  z.strictObject({ ok: z.literal(false), code: z.enum(STEP_CODES), message: z.string().max(500), snapshot: archiveFactsSchema.optional() }),
]);
export type StepOutcome = z.infer<typeof stepOutcomeSchema>;
export type StepFailure = Extract<StepOutcome, { ok: false }>;

export const failure = (code: StepCode, message: string, snapshot?: ArchiveFacts): StepFailure => ({
  ok: false,
  code,
  message: message.slice(0, 500),
  ...(snapshot ? { snapshot } : {}),
});

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
  /**
   * The volume the step runs on and the node it is bound to, when not the server's current one (a
   * move's restore into the volume made on the target node). A Job is pinned to `node`.
   */
  volume: z.strictObject({ claim: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/), node: z.string().max(253).optional() }).optional(),
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
  /** Gives the volume back (idle reclaim, after a verified archive), or the named one (a move's old volume). Idempotent. */
  release(serverName: string, claim?: string): Promise<void>;
  /**
   * The world jobs that can outlive the process that started them (a cluster's Jobs), whoever
   * started them, so that any replica can keep their worlds locked and settle them.
   */
  listJobs(): Promise<WorldJobInCluster[]>;
}

/** A world job found in the cluster, with the plan it carries. */
export interface WorldJobInCluster {
  readonly plan: WorldJobPlan;
  readonly ended: boolean;
  /** What the ended job reported; a job that reported nothing is a coded failure naming why. */
  outcome(): Promise<StepOutcome>;
  remove(): Promise<void>;
}

/** The process stopped waiting for a job that goes on running (shutdown): another replica settles it. */
export class JobHandedOver extends Error {
  override name = 'JobHandedOver';
}

/** What world Jobs need besides the cluster. */
export interface WorldJobSettings {
  /** This service's own image: the Jobs run `node dist/cli/world-job.js`. */
  image: string;
  /** Secret with the BACKUP_S3_* keys, and nothing else the Job does not need. */
  storeSecret: string;
  deadlineSeconds: number;
  log: Logger;
  clock: Clock;
  /** Aborted at shutdown: the wait for a world Job ends (JobHandedOver) and the Job runs on for another replica. */
  signal?: AbortSignal;
}

/** World volumes reached through the cluster's own Jobs on the servers' claims. */
export interface ClusterWorldJobs {
  /** World jobs' steps; their Jobs reach the backup store through its Secret. */
  runner: WorldJobRunner;
  /** File operations, one short Job each; they need no store. */
  files: WorldFileOps;
}
