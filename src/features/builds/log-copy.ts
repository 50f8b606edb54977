import { and, eq, gt, inArray, isNotNull, or, sql } from 'drizzle-orm';
import type { BuildJobs } from '../../adapters/cluster/build-jobs.js';
import { ClusterNoPodError, type PodLogLine } from '../../adapters/cluster/types.js';
import type { BackgroundTask, Leadership } from '../../coordination/index.js';
import type { Transaction } from '../../db/client.js';
import { buildLogLines, buildLogSources, builds } from '../../db/schema/builds.js';
import type { Deps } from '../../deps.js';
import { buildLogRows } from './service.js';
import { isTerminal } from './states.js';

export interface BuildLogCopyOptions {
  jobs: Pick<BuildJobs, 'newestPod' | 'stepLog'>;
  /**
   * Only the replica that leads copies, so the cluster's logs are read once; each round takes or
   * renews the lead, and a batch is stored only while it is held.
   */
  leadership: Pick<Leadership, 'acquire' | 'holds' | 'release'>;
  /** How often builds and their pods are looked at. */
  pollMs?: number;
  /** Lines stored together; a batch also goes out this long after its first line. */
  batchLines?: number;
  batchMs?: number;
}

type CopyDeps = Pick<Deps, 'database' | 'clock' | 'log'>;

/**
 * The `build_log_sources` row that says every step that ran is stored (no container is named `*`):
 * the build log stream of an ended build waits for it.
 */
export const COPY_COMPLETE_SOURCE = '*';

/** A finished build's pod is still looked at this long, for the lines of its last steps. */
const FINISHED_WINDOW_MS = 15 * 60 * 1000;

/** Another copier stored lines of this step since we read its count: start again from the stored count. */
class CursorMoved extends Error {}

/**
 * In the cluster a build's steps are the containers of its Job's pod, and their output is the
 * build log: this copies each step's lines into `build_log_lines`, in step order, prefixed with
 * the step's name and stamped with the runtime's time. A step's stored count moves in the same
 * transaction as its lines and only from the count read, so neither a restart nor a second copier
 * (a leader change) stores a line twice; a restarted copy skips the lines already stored.
 */
export class BuildLogCopier implements BackgroundTask {
  readonly name = 'build_logs';
  readonly #deps: CopyDeps;
  readonly #o: Required<BuildLogCopyOptions>;
  readonly #copying = new Map<string, Promise<void>>();
  /** Builds whose every step that ran is stored. */
  readonly #complete = new Set<string>();
  readonly #stopped = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;

  constructor(deps: CopyDeps, options: BuildLogCopyOptions) {
    this.#deps = deps;
    this.#o = { pollMs: 2_000, batchLines: 200, batchMs: 250, ...options };
  }

  start(): void {
    const next = () => {
      this.#round = this.round()
        .catch((err: unknown) => this.#deps.log.warn({ err }, 'build log copy: a round failed; retried'))
        .finally(() => {
          if (!this.#stopped.signal.aborted) this.#timer = setTimeout(next, this.#o.pollMs).unref();
        });
    };
    next();
  }

  async stop(): Promise<void> {
    this.#stopped.abort();
    clearTimeout(this.#timer);
    await this.#round;
    await Promise.all(this.#copying.values());
    await this.#o.leadership.release();
  }

  /** Starts a copy for every build with a Job whose steps are not all stored; copies run on. */
  async round(): Promise<void> {
    if (this.#stopped.signal.aborted || !(await this.#o.leadership.acquire())) return;
    const since = new Date(this.#deps.clock.now().getTime() - FINISHED_WINDOW_MS);
    const rows = await this.#deps.database.db
      .select({ id: builds.id, status: builds.status })
      .from(builds)
      .where(and(isNotNull(builds.jobName), or(inArray(builds.status, ['pending', 'building']), gt(builds.finishedAt, since))));
    const current = new Set(rows.map((row) => row.id));
    for (const id of this.#complete) if (!current.has(id)) this.#complete.delete(id);
    for (const row of rows) {
      if (this.#complete.has(row.id) || this.#copying.has(row.id)) continue;
      const copy = this.#copyBuild(row.id, isTerminal(row.status))
        .catch((err: unknown) => this.#deps.log.warn({ err, build_id: row.id }, 'build log copy failed; resumed next round'))
        .finally(() => this.#copying.delete(row.id));
      this.#copying.set(row.id, copy);
    }
  }

  /** Copies the steps that ran, in order; a running step is followed until its stream ends. */
  async #copyBuild(buildId: string, buildEnded: boolean): Promise<void> {
    const pod = await this.#o.jobs.newestPod(buildId);
    if (!pod) {
      if (buildEnded) await this.#completed(buildId);
      return;
    }
    const stored = new Map(
      (await this.#deps.database.db.select().from(buildLogSources).where(eq(buildLogSources.buildId, buildId))).map((row) => [row.source, row]),
    );
    let running = false;
    for (const { name: step, state } of pod.steps) {
      const cursor = stored.get(step);
      if (cursor?.done) continue;
      // Steps run one after another: nothing after a waiting step has started.
      if (state === 'waiting') break;
      const ended = state === 'terminated';
      const complete = await this.#copyStep(buildId, pod.name, step, cursor?.lines ?? 0, ended);
      // A followed step's stream ended: the next round reads its state and copies any rest.
      if (!ended || !complete) {
        running = true;
        break;
      }
    }
    if (buildEnded && !running) await this.#completed(buildId);
  }

  async #completed(buildId: string): Promise<void> {
    await this.#deps.database.db.insert(buildLogSources).values({ buildId, source: COPY_COMPLETE_SOURCE, done: true }).onConflictDoNothing();
    this.#complete.add(buildId);
  }

  /** Stores the step's lines past `from`; true when it stored them all (`ended`: none can follow). */
  async #copyStep(buildId: string, pod: string, step: string, from: number, ended: boolean): Promise<boolean> {
    // A stop that came while this copy was looking at the pod has fired its abort already: a
    // listener added now would never hear it, and a followed stream would hold stop() for good.
    if (this.#stopped.signal.aborted) return false;
    const abort = new AbortController();
    const stop = () => abort.abort();
    this.#stopped.signal.addEventListener('abort', stop, { once: true });
    let stored = from;
    let seen = 0;
    let batch: PodLogLine[] = [];
    let timer: NodeJS.Timeout | undefined;
    let writing: Promise<void> = Promise.resolve();
    const flush = (done: boolean) => {
      clearTimeout(timer);
      timer = undefined;
      const lines = batch;
      batch = [];
      writing = writing.then(async () => {
        if (abort.signal.aborted || (lines.length === 0 && !done)) return;
        if (!this.#o.leadership.holds()) throw new CursorMoved('this replica no longer leads');
        await this.#deps.database.db.transaction((tx) => storeLines(tx, buildId, step, stored, lines, done));
        stored += lines.length;
      });
      writing.catch((err: unknown) => {
        if (!(err instanceof CursorMoved)) this.#deps.log.warn({ err, build_id: buildId, step }, 'build log copy: lines not stored; resumed next round');
        stop();
      });
      return writing;
    };
    try {
      for await (const line of this.#o.jobs.stepLog(pod, step, { follow: !ended, signal: abort.signal })) {
        if (++seen <= from) continue;
        batch.push(line);
        if (batch.length >= this.#o.batchLines) void flush(false);
        else timer ??= setTimeout(() => void flush(false), this.#o.batchMs);
      }
      if (abort.signal.aborted) {
        await writing.catch(() => undefined);
        return false;
      }
      await flush(ended);
      return ended;
    } catch (err) {
      // Another copier moved on, or the pod went away (a cancelled build): the next round looks again.
      if (err instanceof CursorMoved || err instanceof ClusterNoPodError) return false;
      throw err;
    } finally {
      clearTimeout(timer);
      abort.abort();
      this.#stopped.signal.removeEventListener('abort', stop);
    }
  }
}

/** Stores the lines and moves the step's count from `from`, or throws CursorMoved (nothing stored). */
async function storeLines(tx: Transaction, buildId: string, step: string, from: number, lines: PodLogLine[], done: boolean): Promise<void> {
  await tx.insert(buildLogSources).values({ buildId, source: step }).onConflictDoNothing();
  const moved = await tx
    .update(buildLogSources)
    .set({ lines: sql`${buildLogSources.lines} + ${lines.length}`, done })
    .where(and(eq(buildLogSources.buildId, buildId), eq(buildLogSources.source, step), eq(buildLogSources.lines, from)))
    .returning({ lines: buildLogSources.lines });
  if (moved.length === 0) throw new CursorMoved(`another copier stored lines of ${step}`);
  const rows = buildLogRows(
    buildId,
    lines.map(({ time, line }) => ({ at: time, line })),
    `[${step}] `,
  );
  if (rows.length > 0) await tx.insert(buildLogLines).values(rows);
}
