import type { ClusterAdapter, PodLogLine } from '../../adapters/cluster/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { STREAM_TIMINGS, type StreamTimings } from './sse.js';

/** How far back a viewer may resume (contract section 8). */
export const RESUME_WINDOW_MS = 60 * 60_000;
/** Lines of history a viewer without Last-Event-ID gets first. */
export const TAIL_LINES = 100;
/** Lines a server's hub keeps for resumes, within the resume window. */
const MAX_KEPT_LINES = 10_000;

/** One console viewer as the hub sees it: lines in, an end when the pod's log ends. */
export interface LogViewer {
  /** Lines stamped before this (ms) are not for this viewer (a resume from a second). */
  readonly fromMs: number;
  deliver(line: PodLogLine): void;
  end(): void;
}

/**
 * The console of one server on this replica: ONE followed pod log, whatever the number of
 * viewers, kept for an hour so that a viewer resumes from its Last-Event-ID second without asking
 * the cluster again. It first reads the last hour once (not followed), then follows from the
 * last second it read, skipping the lines of that second it already holds.
 */
export class LogHub {
  readonly #lines: PodLogLine[] = [];
  readonly #viewers = new Set<LogViewer>();
  readonly #upstream = new AbortController();
  readonly ready: Promise<void>;
  #ended = false;

  constructor(
    private readonly name: string,
    private readonly deps: { cluster: ClusterAdapter; clock: Clock; log: Logger },
    private readonly onEnd: () => void,
  ) {
    let markReady!: () => void;
    this.ready = new Promise((resolve) => (markReady = resolve));
    void this.#run(markReady);
  }

  get viewers(): number {
    return this.#viewers.size;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Adds a viewer after `ready`: its history first (a resume, or the tail), then every new line. */
  attach(viewer: LogViewer, resume: boolean): () => void {
    const history = resume ? this.#lines.filter((l) => l.time.getTime() >= viewer.fromMs) : this.#lines.slice(-TAIL_LINES);
    for (const line of history) viewer.deliver(line);
    if (this.#ended) {
      viewer.end();
      return () => undefined;
    }
    this.#viewers.add(viewer);
    return () => this.#detach(viewer);
  }

  /** Stops a hub that no viewer joined (its first viewer went away while it started). */
  closeIfIdle(): void {
    if (this.#viewers.size === 0) this.close();
  }

  /** Ends the upstream and every viewer (shutdown). */
  close(): void {
    this.#upstream.abort();
    this.#finish();
  }

  async #run(markReady: () => void): Promise<void> {
    const { signal } = this.#upstream;
    const since = new Date(this.deps.clock.now().getTime() - RESUME_WINDOW_MS);
    try {
      for await (const line of this.deps.cluster.podLogs(this.name, { sinceTime: since, follow: false, signal })) this.#keep(line);
      markReady();
      const last = this.#lines.at(-1);
      const followFrom = last ? new Date(Math.floor(last.time.getTime() / 1000) * 1000) : since;
      let skip = last ? this.#lines.filter((l) => l.time.getTime() >= followFrom.getTime()).length : 0;
      for await (const line of this.deps.cluster.podLogs(this.name, { sinceTime: followFrom, follow: true, signal })) {
        if (skip > 0) {
          skip -= 1;
          continue;
        }
        this.#keep(line);
        for (const viewer of this.#viewers) if (line.time.getTime() >= viewer.fromMs) viewer.deliver(line);
      }
    } catch (err) {
      if (!signal.aborted) this.deps.log.info({ server: this.name, err: (err as Error).message }, 'console log stream ended');
    } finally {
      markReady();
      this.#finish();
    }
  }

  #keep(line: PodLogLine): void {
    this.#lines.push(line);
    const horizon = this.deps.clock.now().getTime() - RESUME_WINDOW_MS;
    let drop = Math.max(0, this.#lines.length - MAX_KEPT_LINES);
    while (drop < this.#lines.length && this.#lines[drop]!.time.getTime() < horizon) drop += 1;
    if (drop > 0) this.#lines.splice(0, drop);
  }

  #detach(viewer: LogViewer): void {
    this.#viewers.delete(viewer);
    // The last viewer gone: the upstream stops (a later viewer starts a new hub).
    if (this.#viewers.size === 0 && !this.#ended) this.close();
  }

  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const viewer of this.#viewers) viewer.end();
    this.#viewers.clear();
    this.onEnd();
  }
}

/** The hubs of this replica, one per server with viewers. */
export class LogHubs {
  readonly #hubs = new Map<string, LogHub>();
  readonly timings: StreamTimings;

  constructor(
    private readonly deps: { cluster: ClusterAdapter; clock: Clock; log: Logger },
    timings: Partial<StreamTimings> = {},
  ) {
    this.timings = { ...STREAM_TIMINGS, ...timings };
  }

  /** The server's hub, started when its first viewer comes. */
  hub(name: string): LogHub {
    const existing = this.#hubs.get(name);
    if (existing && !existing.ended) return existing;
    const hub: LogHub = new LogHub(name, this.deps, () => {
      if (this.#hubs.get(name) === hub) this.#hubs.delete(name);
    });
    this.#hubs.set(name, hub);
    return hub;
  }

  /** Servers with a followed pod log on this replica. */
  get upstreams(): number {
    return this.#hubs.size;
  }

  close(): void {
    for (const hub of [...this.#hubs.values()]) hub.close();
  }
}
