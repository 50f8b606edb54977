import { ClusterNoPodError, type ClusterAdapter, type PodLogLine } from '../../adapters/cluster/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { comparePositions, LineNumbering, type StreamPosition } from './event-ids.js';
import { STREAM_TIMINGS, type StreamTimings } from './sse.js';

/** How far back a viewer may resume (contract section 8). */
export const RESUME_WINDOW_MS = 60 * 60_000;
/** Lines of history a viewer without Last-Event-ID gets first. */
export const TAIL_LINES = 100;
/** Lines a server's hub keeps for resumes, within the resume window. */
const MAX_KEPT_LINES = 10_000;

/** A line of the pod's log with its place in it: its second and its number within that second (event-ids.ts). */
export interface NumberedLine extends PodLogLine {
  position: StreamPosition;
}

/** One console viewer as the hub sees it: lines in, an end when the pod's log ends. */
export interface LogViewer {
  /** A resume: the viewer has every line up to this one (or, index -1, up to that second); absent for the tail. */
  readonly after?: StreamPosition;
  deliver(line: NumberedLine): void;
  end(): void;
}

const samePosition = (a: StreamPosition, b: StreamPosition) => a.second === b.second && a.index === b.index;
const floorSecond = (time: Date) => new Date(Math.floor(time.getTime() / 1000) * 1000);

/**
 * The console of one server on this replica: ONE followed pod log, whatever the number of
 * viewers, kept for an hour so that a viewer resumes from its Last-Event-ID without asking the
 * cluster again. It first reads the last hour once (not followed; the last 100 lines when the
 * hour holds fewer), then follows from the last second it read, skipping the lines of that second
 * it already holds. Every read starts at a whole second (the API's `sinceTime` is one), so the
 * lines are numbered within their second as on every other replica reading the same pod log.
 */
export class LogHub {
  readonly #lines: NumberedLine[] = [];
  /** Viewers still waiting for the line they resume after (it had not been read here yet). */
  readonly #behind = new Map<LogViewer, StreamPosition>();
  readonly #viewers = new Set<LogViewer>();
  readonly #upstream = new AbortController();
  readonly ready: Promise<void>;
  #ended = false;
  #failed = false;

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

  /**
   * The pod's log could not be read for a reason other than "no running pod" (the API server
   * answered 500, RBAC refused pods/log, the cluster is unreachable): a cluster fault, not a
   * stopped server.
   */
  get failed(): boolean {
    return this.#failed;
  }

  /**
   * Adds a viewer after `ready`: its history first (the lines after its resume position, or the
   * tail), then every new line. A resume position this hub has not read yet (another replica
   * read further) holds the new lines back until they pass it.
   */
  attach(viewer: LogViewer): () => void {
    const history = viewer.after ? this.#after(viewer.after) : this.#lines.slice(-TAIL_LINES);
    for (const line of history) viewer.deliver(line);
    const last = this.#lines.at(-1);
    if (viewer.after && history.length === 0 && (!last || comparePositions(last.position, viewer.after) < 0)) this.#behind.set(viewer, viewer.after);
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

  /** The held lines after `position`: after that very line when it is held, else those ordered after it. */
  #after(position: StreamPosition): NumberedLine[] {
    const at = this.#lines.findIndex((l) => samePosition(l.position, position));
    if (at >= 0) return this.#lines.slice(at + 1);
    return this.#lines.filter((l) => comparePositions(l.position, position) > 0);
  }

  /** The pod's log from a whole second on, each line numbered within its second. */
  async *#read(options: { sinceTime: Date; follow: boolean; signal: AbortSignal }): AsyncGenerator<NumberedLine> {
    const numbering = new LineNumbering();
    const sinceTime = floorSecond(options.sinceTime);
    for await (const line of this.deps.cluster.podLogs(this.name, { ...options, sinceTime })) yield { ...line, position: numbering.next(line.time.getTime()) };
  }

  async #run(markReady: () => void): Promise<void> {
    const { signal } = this.#upstream;
    const since = floorSecond(new Date(this.deps.clock.now().getTime() - RESUME_WINDOW_MS));
    try {
      for await (const line of this.#read({ sinceTime: since, follow: false, signal })) this.#keep(line);
      if (this.#lines.length < TAIL_LINES) {
        // A quiet hour: the tail for new viewers reaches further back (a later read, so it holds the hour's lines too).
        let tail = 0;
        let first: Date | undefined;
        for await (const line of this.deps.cluster.podLogs(this.name, { tailLines: TAIL_LINES, follow: false, signal })) {
          first ??= line.time;
          tail += 1;
        }
        if (first && tail > this.#lines.length) {
          // The tail may begin inside a second: read again from that second's start, so that its lines get their numbers.
          const lines: NumberedLine[] = [];
          for await (const line of this.#read({ sinceTime: first, follow: false, signal })) lines.push(line);
          this.#lines.splice(0, this.#lines.length, ...lines);
        }
      }
      markReady();
      const last = this.#lines.at(-1);
      const followFrom = last ? floorSecond(last.time) : since;
      let skip = last ? this.#lines.filter((l) => l.time.getTime() >= followFrom.getTime()).length : 0;
      for await (const line of this.#read({ sinceTime: followFrom, follow: true, signal })) {
        if (skip > 0) {
          skip -= 1;
          continue;
        }
        this.#keep(line);
        for (const viewer of this.#viewers) if (this.#caughtUp(viewer, line)) viewer.deliver(line);
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ClusterNoPodError) {
        this.deps.log.info({ server: this.name, err: err.message }, 'console log stream ended');
      } else {
        this.#failed = true;
        const code = (err as { code?: unknown }).code;
        this.deps.log.warn({ server: this.name, err: (err as Error).message, ...(typeof code === 'number' ? { status: code } : {}) }, 'console log unreadable');
      }
    } finally {
      markReady();
      this.#finish();
    }
  }

  /** Whether a new line is for `viewer`: always, unless it resumes after a line this hub reaches only now. */
  #caughtUp(viewer: LogViewer, line: NumberedLine): boolean {
    const after = this.#behind.get(viewer);
    if (!after) return true;
    const order = comparePositions(line.position, after);
    if (order >= 0) this.#behind.delete(viewer);
    return order > 0;
  }

  #keep(line: NumberedLine): void {
    this.#lines.push(line);
    const horizon = this.deps.clock.now().getTime() - RESUME_WINDOW_MS;
    let drop = Math.max(0, this.#lines.length - MAX_KEPT_LINES);
    while (drop < this.#lines.length && this.#lines[drop]!.time.getTime() < horizon) drop += 1;
    if (drop > 0) this.#lines.splice(0, drop);
  }

  #detach(viewer: LogViewer): void {
    this.#viewers.delete(viewer);
    this.#behind.delete(viewer);
    // The last viewer gone: the upstream stops (a later viewer starts a new hub).
    if (this.#viewers.size === 0 && !this.#ended) this.close();
  }

  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const viewer of this.#viewers) viewer.end();
    this.#viewers.clear();
    this.#behind.clear();
    this.onEnd();
  }
}

/** The hubs of this replica, one per server with viewers. */
export class LogHubs {
  readonly #hubs = new Map<string, LogHub>();
  readonly #shutdowns = new WeakSet<AbortSignal>();
  #closing = false;
  readonly timings: StreamTimings;

  constructor(
    private readonly deps: { cluster: ClusterAdapter; clock: Clock; log: Logger },
    timings: Partial<StreamTimings> = {},
  ) {
    this.timings = { ...STREAM_TIMINGS, ...timings };
  }

  /**
   * Ends every stream when `signal` aborts (process shutdown): one listener for all viewers,
   * whatever their number.
   */
  endOn(signal: AbortSignal): void {
    if (this.#shutdowns.has(signal)) return;
    this.#shutdowns.add(signal);
    if (signal.aborted) this.#closing = true;
    else signal.addEventListener('abort', () => ((this.#closing = true), this.close()), { once: true });
  }

  /** Whether shutdown has begun (no new stream is started). */
  get closing(): boolean {
    return this.#closing;
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

/** The console feature's part of the service. */
export interface ConsoleParts {
  /** The console's log streams on this replica: one followed pod log per server, shared by its viewers. */
  consoleLogs: LogHubs;
}
