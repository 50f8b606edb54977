import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../../lib/logger.js';
import { ClusterConflictError, LABEL_DOMAIN } from '../types.js';
import {
  failure,
  JobHandedOver,
  stepOutcomeSchema,
  worldJobPlanSchema,
  type StepOutcome,
  type VolumeStep,
  type WorldJobInCluster,
  type WorldJobPlan,
  type WorldJobRunner,
} from '../world-jobs.js';
import { defaultWorldClaim, type WorldVolumeRef } from '../world-volumes.js';

/** The part of the Kubernetes adapter world jobs use. */
export interface WorldJobClient {
  createJob(body: V1Job): Promise<V1Job>;
  getJob(name: string): Promise<V1Job | undefined>;
  listJobs(labelSelector: string): Promise<V1Job[]>;
  deleteJob(name: string): Promise<void>;
  listPods(labelSelector: string): Promise<V1Pod[]>;
  getPersistentVolumeClaim(name: string): Promise<V1PersistentVolumeClaim | undefined>;
  deletePersistentVolumeClaim(name: string): Promise<void>;
  /** The claim holding the server's world now and its node (world-volumes.ts); absent: the claim template's. */
  volumeOf?(serverName: string): Promise<WorldVolumeRef>;
}

const WORLD_JOB_LABEL = `${LABEL_DOMAIN}/world-job`;
export const WORLD_SERVER_LABEL = `${LABEL_DOMAIN}/world-server`;
export const WORLD_PLAN_ANNOTATION = `${LABEL_DOMAIN}/world-job-plan`;
export const WORLD_JOB_CONTAINER = 'world-job';
/** Where the pod sees the world: the same path as the game server's container. */
export const WORLD_MOUNT = '/data';

/**
 * One Job name per server: the API server refuses a second Job on the same volume while the first
 * exists, whichever replica asks, so the name is the volume's lock in the cluster.
 */
export const worldJobName = (serverName: string) => `felis-world-${serverName}`;
/** The claim of the StatefulSet's `world` template for pod 0 (lifecycle/workloads.ts). */
export const worldClaimName = defaultWorldClaim;

/** The server's volume now: the one a move recorded on it, else the claim template's. */
export async function currentVolume(client: Pick<WorldJobClient, 'volumeOf'>, serverName: string): Promise<WorldVolumeRef> {
  return client.volumeOf ? client.volumeOf(serverName) : { claim: worldClaimName(serverName) };
}

/** A pod on a node-local volume runs where the volume is bound. */
export const pinnedTo = (node: string | undefined) => (node ? { nodeSelector: { 'kubernetes.io/hostname': node } } : {});

export interface WorldJobOptions {
  namespace: string;
  /** This service's own image: the Job runs `node dist/cli/world-job.js`. */
  image: string;
  /** Secret with the BACKUP_S3_* keys, and nothing else the Job does not need. */
  storeSecret: string;
  deadlineSeconds: number;
}

/**
 * What every world pod (a step's or a file operation's) shares: it runs once, without a service
 * account token or service links, as the game server's user (uid 1000, so files keep their
 * owner), never as root.
 */
export const WORLD_POD = {
  restartPolicy: 'Never',
  automountServiceAccountToken: false,
  enableServiceLinks: false,
  securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
};
export const WORLD_CONTAINER_SECURITY = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };

/** The CLI's arguments of a step: values are separate argv entries, never a shell's text. */
export function stepArgs(step: VolumeStep, folder: string, tag: string): string[] {
  const common = ['--folder', folder, '--tag', tag, '--key', step.key];
  switch (step.op) {
    case 'backup':
      return ['backup', ...common];
    case 'restore':
      return ['restore', ...common, '--sha256', step.sha256, ...(step.snapshotKey ? ['--snapshot-key', step.snapshotKey] : [])];
    case 'export':
      return ['export', ...common, '--path', step.path];
  }
}

/**
 * The Job of one world step: the server's claim mounted at /data, the control plane's image
 * running the step as uid 1000 (the game server's user, so files keep their owner), the store's
 * settings from their Secret, a deadline and limits, no service account token, and the outcome
 * written as JSON to the termination message, which the service reads from the ended pod.
 */
export function worldJobManifest(plan: WorldJobPlan, options: WorldJobOptions): V1Job {
  const labels = { 'app.kubernetes.io/part-of': 'felis', [WORLD_JOB_LABEL]: plan.jobId, [WORLD_SERVER_LABEL]: plan.serverName };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: worldJobName(plan.serverName),
      namespace: options.namespace,
      labels,
      annotations: { [WORLD_PLAN_ANNOTATION]: JSON.stringify(plan) },
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: options.deadlineSeconds,
      // Kept a day after it ends so that a replica can still settle it if its starter died.
      ttlSecondsAfterFinished: 86_400,
      template: {
        metadata: { labels },
        spec: {
          ...WORLD_POD,
          ...pinnedTo(plan.volume?.node),
          volumes: [
            { name: 'world', persistentVolumeClaim: { claimName: plan.volume?.claim ?? worldClaimName(plan.serverName) } },
            { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
          ],
          containers: [
            {
              name: WORLD_JOB_CONTAINER,
              image: options.image,
              command: ['node', 'dist/cli/world-job.js'],
              args: stepArgs(plan.step, WORLD_MOUNT, plan.jobId),
              envFrom: [{ secretRef: { name: options.storeSecret } }],
              env: [{ name: 'NODE_ENV', value: 'production' }],
              volumeMounts: [
                { name: 'world', mountPath: WORLD_MOUNT },
                { name: 'tmp', mountPath: '/tmp' },
              ],
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              // Measured (docs/notes/issue-17-kube.md): peak RSS ~270 MiB whatever the world's size.
              resources: { requests: { cpu: '250m', memory: '384Mi' }, limits: { cpu: '2', memory: '1Gi' } },
              securityContext: WORLD_CONTAINER_SECURITY,
            },
          ],
        },
      },
    },
  };
}

/** The condition that ended a Job, if it has ended. */
export function endOf(job: V1Job): { succeeded: boolean; reason?: string } | undefined {
  const ended = job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return ended && { succeeded: ended.type === 'Complete', reason: ended.reason };
}

/** The plan a Job carries, or undefined for a Job that is not a valid world job. */
export function planOf(job: V1Job): WorldJobPlan | undefined {
  const raw = job.metadata?.annotations?.[WORLD_PLAN_ANNOTATION];
  if (!raw) return undefined;
  try {
    const parsed = worldJobPlanSchema.safeParse(JSON.parse(raw));
    return parsed.success && parsed.data.jobId === job.metadata?.labels?.[WORLD_JOB_LABEL] ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What an ended Job reported: its container's termination message, checked against the outcome's
 * schema. A Job that ended without one (its deadline passed, the pod was evicted, the process was
 * killed) is a coded failure naming the Job's reason.
 */
async function outcomeOf(client: Pick<WorldJobClient, 'listPods'>, job: V1Job, jobId: string): Promise<StepOutcome> {
  const pods = await client.listPods(`${WORLD_JOB_LABEL}=${jobId}`);
  for (const pod of pods) {
    const status = pod.status?.containerStatuses?.find((c) => c.name === WORLD_JOB_CONTAINER);
    const message = status?.state?.terminated?.message;
    if (!message) continue;
    try {
      const parsed = stepOutcomeSchema.safeParse(JSON.parse(message));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON: fall through to the Job's own reason
    }
  }
  const reason = endOf(job)?.reason;
  if (reason === 'DeadlineExceeded') return failure('failed', 'the job passed its deadline and was stopped');
  return failure('failed', `the job ended without reporting an outcome (${reason ?? 'unknown'})`);
}

export interface KubernetesRunnerOptions extends WorldJobOptions {
  client: WorldJobClient;
  log: Logger;
  /** How often a running Job is looked at. */
  pollMs?: number;
  /** Aborted at shutdown: the wait ends (JobHandedOver) and the Job runs on for another replica. */
  signal?: AbortSignal;
}

/** Runs world steps as Kubernetes Jobs on the servers' claims. */
export class KubernetesWorldJobRunner implements WorldJobRunner {
  readonly kind = 'kubernetes' as const;
  readonly #options: KubernetesRunnerOptions;

  constructor(options: KubernetesRunnerOptions) {
    this.#options = options;
  }

  async run(plan: WorldJobPlan): Promise<StepOutcome> {
    const { client, log } = this.#options;
    const name = worldJobName(plan.serverName);
    try {
      // A step without a volume of its own runs on the server's current one (a moved world's claim).
      if (!plan.volume) plan = { ...plan, volume: await currentVolume(client, plan.serverName) };
      await client.createJob(worldJobManifest(plan, this.#options));
    } catch (err) {
      if (err instanceof ClusterConflictError) return failure('maintenance_in_progress', 'another job still holds the world volume');
      log.error({ err, server: plan.serverName, job: plan.jobId }, 'the cluster refused a world job');
      return failure('failed', 'the cluster refused the job');
    }
    const ended = await this.#waitForEnd(name, plan.jobId);
    if (!ended) return failure('failed', 'the job was deleted before it ended');
    const outcome = await this.#readOutcome(ended, plan.jobId);
    await client.deleteJob(name).catch((err: unknown) => log.warn({ err, job: name }, 'an ended world job could not be deleted; a later sweep does'));
    return outcome;
  }

  /** The ended Job's outcome; a failing API is retried (the Job and its pod stay until deleted). */
  async #readOutcome(job: V1Job, jobId: string): Promise<StepOutcome> {
    const { client, log, signal } = this.#options;
    for (;;) {
      if (signal?.aborted) throw new JobHandedOver('the service is stopping');
      try {
        return await outcomeOf(client, job, jobId);
      } catch (err) {
        log.warn({ err, job: job.metadata?.name }, 'an ended world job\'s pod could not be read; trying again');
      }
      await pause(this.#options.pollMs ?? 5_000, signal);
    }
  }

  /** Looks at the Job until it ends; a failing API is retried (the Job's deadline bounds the wait). */
  async #waitForEnd(name: string, jobId: string): Promise<V1Job | undefined> {
    const { client, log, signal } = this.#options;
    const pollMs = this.#options.pollMs ?? 5_000;
    for (;;) {
      if (signal?.aborted) throw new JobHandedOver('the service is stopping');
      try {
        const job = await client.getJob(name);
        if (!job || job.metadata?.labels?.[WORLD_JOB_LABEL] !== jobId) return undefined;
        if (endOf(job)) return job;
      } catch (err) {
        log.warn({ err, job: name }, 'a world job could not be read; trying again');
      }
      await pause(pollMs, signal);
    }
  }

  async busy(serverName: string): Promise<boolean> {
    return (await this.#options.client.getJob(worldJobName(serverName))) !== undefined;
  }

  async exists(serverName: string): Promise<boolean> {
    const { claim } = await currentVolume(this.#options.client, serverName);
    return (await this.#options.client.getPersistentVolumeClaim(claim)) !== undefined;
  }

  async release(serverName: string, claim?: string): Promise<void> {
    await this.#options.client.deletePersistentVolumeClaim(claim ?? (await currentVolume(this.#options.client, serverName)).claim);
  }

  /** The world Jobs in the namespace that carry a valid plan, whichever replica started them. */
  async listJobs(): Promise<WorldJobInCluster[]> {
    const { client } = this.#options;
    return (await client.listJobs(WORLD_JOB_LABEL)).flatMap((job) => {
      const plan = planOf(job);
      if (!plan) return [];
      return [
        {
          plan,
          ended: endOf(job) !== undefined,
          outcome: () => outcomeOf(client, job, plan.jobId),
          remove: () => client.deleteJob(worldJobName(plan.serverName)),
        },
      ];
    });
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
