import type { Readable } from 'node:stream';
import type { BuildJob } from '../../adapters/cluster/build-jobs.js';
import type { ScanSummary } from './scan-gate.js';
import type { ContextStore } from './submissions/context-store.js';

/**
 * How an in-process job talks back: the same steps the `build` caller takes over the internal
 * face (status, scan, context download), plus its log. A job in the cluster uses the routes.
 */
export interface BuildReporter {
  status(status: 'building' | 'succeeded' | 'failed', error?: string): Promise<void>;
  scan(report: unknown, sbom?: unknown): Promise<ScanSummary>;
  log(lines: string[]): Promise<void>;
  /** The pinned context tarball (gzip), when the build names one. */
  context(): Promise<Readable>;
}

/**
 * Runs build jobs: a builder, then the scanner and the gate, then the push (only when unblocked).
 * The cluster's build Jobs are one (they report over the internal face and leave the reporter
 * alone); the simulated runner is the other.
 */
/** The builds feature's part of the service. */
export interface BuildsParts {
  /** Runs image builds as jobs; absent: build routes answer 503. */
  buildRunner?: BuildRunner;
  /** Where submission contexts are staged and stored; absent: upload routes answer 503. */
  contextStore?: ContextStore;
}

export interface BuildRunner {
  readonly kind: 'simulated' | 'kubernetes';
  /** Hands the build off; resolves with the job's name once the job exists. */
  start(job: BuildJob, reporter: BuildReporter): Promise<{ jobName: string }>;
  /** Stops a job (best effort; a job that is gone is not an error). */
  cancel(jobName: string): Promise<void>;
}
