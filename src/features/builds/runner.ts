import type { Readable } from 'node:stream';
import type { ScanSummary } from './scan-gate.js';

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

/** Runs build jobs: a builder, then the scanner and the gate, then the push (only when unblocked). */
export interface BuildRunner {
  readonly kind: 'simulated' | 'kubernetes';
  /** Hands the build off; resolves with the job's name once the job exists. */
  start(job: BuildJob, reporter: BuildReporter): Promise<{ jobName: string }>;
  /** Stops a job (best effort; a job that is gone is not an error). */
  cancel(jobName: string): Promise<void>;
}

/** The job name of a build: a DNS-1123 label that names the build. */
export function jobNameOf(buildId: string): string {
  return `felis-build-${buildId.replace(/[^a-z0-9]/g, '').slice(0, 32)}`;
}
