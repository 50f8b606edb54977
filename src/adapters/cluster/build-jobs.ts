import type { PodLogLine, PodLogOptions } from './types.js';

/** What a build job needs to know: the build, never a storage path or a token. */
export interface BuildJob {
  buildId: string;
  imageRef: string;
  dockerfile?: string;
  /** The approved submission whose context the job downloads (internal context route). */
  contextRef?: string;
  /** The sha-256 the context must have; the job refuses any other bytes. */
  contextDigest?: string;
  baseImage?: string;
}

/** The job name of a build: a DNS-1123 label that names the build. */
export function jobNameOf(buildId: string): string {
  return `felis-build-${buildId.replace(/[^a-z0-9]/g, '').slice(0, 32)}`;
}

/** A build's Job that failed before its steps could report (a step crashed, the deadline passed). */
export interface FailedBuildJob {
  buildId: string;
  reason: string;
}

export type BuildStepState = 'waiting' | 'running' | 'terminated';

/** The pod of a build's Job: its steps (containers) in the order they run, each with its state. */
export interface BuildPod {
  name: string;
  steps: Array<{ name: string; state: BuildStepState }>;
}

/**
 * Image builds as Jobs of the cluster. A Job reports its own progress over the internal face; the
 * cluster tells which Jobs died before they could, and keeps what each step wrote in the Job's pod.
 */
export interface BuildJobs {
  /** Where the jobs run: their build log is copied from their pods, not written by the service. */
  readonly kind: 'kubernetes';
  /** Creates the build's Job; resolves with its name once it exists. */
  start(job: BuildJob): Promise<{ jobName: string }>;
  /** Deletes a Job and its pod (one that is gone is not an error). */
  cancel(jobName: string): Promise<void>;
  /** Every build Job that failed, as it is now and as it happens, until stopped. */
  watchFailed(onFailed: (failed: FailedBuildJob) => void): { stop(): void };
  /** The newest pod of the build's Job, or undefined while it has none. */
  newestPod(buildId: string): Promise<BuildPod | undefined>;
  /** One step's lines, stamped by the runtime; iterating throws ClusterNoPodError once the pod is gone. */
  stepLog(pod: string, step: string, options: PodLogOptions): AsyncIterable<PodLogLine>;
}
