import { jobNameOf, type BuildJob } from '../../adapters/cluster/build-jobs.js';
import type { Clock } from '../../lib/clock.js';
import { readContext, type ContextContents } from './context-scan.js';
import type { BuildReporter, BuildRunner } from './runner.js';
import { blockedReason } from './scan-gate.js';
import { standInReport, standInSbom } from './stand-in-scanner.js';

/**
 * The embedded default's builder: runs each job in-process, as the cluster's job would: it reports
 * `building`, reads the pinned context (refusing other bytes), writes a build log, scans with the
 * stand-in scanner, hands the report to the gate, and reports `succeeded` (the push) only when
 * the gate did not block.
 */
export class SimulatedBuildRunner implements BuildRunner {
  readonly kind = 'simulated';
  readonly #running = new Map<string, { cancelled: boolean; done: Promise<void> }>();

  constructor(private readonly options: { clock: Clock; onError?: (err: unknown, job: BuildJob) => void }) {}

  async start(job: BuildJob, reporter: BuildReporter): Promise<{ jobName: string }> {
    const jobName = jobNameOf(job.buildId);
    const state = { cancelled: false, done: Promise.resolve() };
    state.done = this.#run(job, jobName, reporter, state).catch((err: unknown) => this.options.onError?.(err, job));
    this.#running.set(jobName, state);
    void state.done.finally(() => this.#running.delete(jobName));
    return { jobName };
  }

  async cancel(jobName: string): Promise<void> {
    const state = this.#running.get(jobName);
    if (state) state.cancelled = true;
  }

  /** Resolves when every job has finished (tests and shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.#running.values()].map((s) => s.done));
  }

  async #run(job: BuildJob, jobName: string, reporter: BuildReporter, state: { cancelled: boolean }): Promise<void> {
    // Let the hand-off record the job name first, as a scheduled pod would.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (state.cancelled) return;
    await reporter.status('building');
    await reporter.log([`job ${jobName}: building ${job.imageRef}`]);
    let contents: ContextContents = { sha256: '', files: [], texts: new Map() };
    if (job.contextRef) {
      await reporter.log([`fetching context ${job.contextRef}`]);
      contents = await readContext(await reporter.context());
      if (job.contextDigest && contents.sha256 !== job.contextDigest) {
        await reporter.log([`context sha256 ${contents.sha256} is not the pinned ${job.contextDigest}`]);
        await reporter.status('failed', 'the context does not match the digest the build was pinned to');
        return;
      }
      await reporter.log([`context sha256:${contents.sha256}: ${contents.files.length} files`]);
    }
    const dockerfile = job.dockerfile ?? contents.texts.get('Dockerfile') ?? `FROM ${job.baseImage ?? 'scratch'}\nCOPY . /data\n`;
    const steps = dockerfile.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
    await reporter.log(steps.map((step, i) => `STEP ${i + 1}/${steps.length}: ${step.replace(/[\x00-\x1f\x7f]/g, '?')}`));
    if (state.cancelled) return;
    const now = this.options.clock.now();
    await reporter.log(['scanning the image (vulnerabilities, secrets)']);
    const summary = await reporter.scan(standInReport(job.imageRef, contents, now), standInSbom(job.imageRef, contents, now));
    const reason = blockedReason(summary);
    if (reason) {
      await reporter.log([`${reason}; the image is not pushed`]);
      return;
    }
    if (state.cancelled) return;
    await reporter.log([`scan passed (${summary.packages} packages); pushing ${job.imageRef}`, 'pushed']);
    await reporter.status('succeeded');
  }
}
