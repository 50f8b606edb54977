import { formatEventId, type StreamPosition } from './event-ids.js';
import type { LogHub, LogViewer, NumberedLine } from './log-hub.js';

export interface StreamTimings {
  /** A `:` comment at least this often, so that no proxy or runtime idle time-out cuts a quiet stream. */
  keepAliveMs: number;
  /** The caller's access is checked again this often. */
  recheckMs: number;
  /** A stream ends after this long; the client reconnects. */
  lifetimeMs: number;
  /** Bytes a viewer may leave unread beyond its history before it is dropped (it then resumes). */
  maxQueuedBytes: number;
}

export const STREAM_TIMINGS: StreamTimings = {
  keepAliveMs: 15_000,
  recheckMs: 60_000,
  lifetimeMs: 30 * 60_000,
  maxQueuedBytes: 1 << 20,
};

/** The verdict of an access re-check: still allowed, revoked, or unknown (the store is down; keep going). */
export type Recheck = () => Promise<'allowed' | 'revoked' | 'unknown'>;

export interface ConsoleSseOptions {
  hub: LogHub;
  /** From a Last-Event-ID: the lines after this position; absent for the tailed backlog. */
  resumeAfter?: StreamPosition;
  timings: StreamTimings;
  recheck: Recheck;
  /** Subscribes a re-check to run at once when the access may have changed; returns the unsubscribe. */
  recheckOn?: (run: () => void) => () => void;
  /** Called once the stream has ended, whatever ended it. */
  onClose: () => void;
}

const encoder = new TextEncoder();
const REVOKED = encoder.encode('event: revoked\ndata: revoked\n\n');
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n');

/** One log line as an event: `id:` its second and number in it (event-ids.ts), then its text (a stray CR or LF splits data lines). */
export function formatLine(line: NumberedLine): string {
  const data = line.line.split(/\r\n|\r|\n/).map((part) => `data: ${part}\n`).join('');
  return `id: ${formatEventId(line.position)}\n${data}\n`;
}

/**
 * A viewer's event stream. It ends on its own after the lifetime, when its hub ends (the pod's
 * log ended, or shutdown), when a re-check finds the access gone (with `event: revoked`), or when the client leaves
 * or stops reading (its queue passes maxQueuedBytes beyond its history: dropped, not buffered).
 */
export function consoleSse(options: ConsoleSseOptions): ReadableStream<Uint8Array> {
  const { hub, timings } = options;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let allowance = timings.maxQueuedBytes;
  const timers: NodeJS.Timeout[] = [];
  let detach = () => undefined as void;

  const stop = () => {
    if (closed) return false;
    closed = true;
    for (const timer of timers) clearTimeout(timer);
    detach();
    options.onClose();
    return true;
  };
  function finish(last?: Uint8Array) {
    if (!stop()) return;
    if (last) controller.enqueue(last);
    controller.close();
  }
  const write = (bytes: Uint8Array) => {
    if (closed) return;
    controller.enqueue(bytes);
    // desiredSize is the high-water mark less what waits unread.
    if ((controller.desiredSize ?? 0) < -allowance) finish();
  };

  const viewer: LogViewer = {
    ...(options.resumeAfter ? { after: options.resumeAfter } : {}),
    deliver: (line) => write(encoder.encode(formatLine(line))),
    end: () => finish(),
  };

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        write(encoder.encode(': console\nretry: 2000\n\n'));
        const unread = () => -(controller.desiredSize ?? 0);
        detach = hub.attach(viewer);
        // The history is written at once; only what piles up after it counts as slow reading.
        allowance += Math.max(0, unread());
        if (closed) return;
        const keepAlive = setInterval(() => write(KEEP_ALIVE), timings.keepAliveMs);
        const runRecheck = () => {
          void options.recheck().then((verdict) => {
            if (verdict === 'revoked') finish(REVOKED);
          });
        };
        const recheck = setInterval(runRecheck, timings.recheckMs);
        if (options.recheckOn) {
          const unwatch = options.recheckOn(runRecheck);
          const detachHub = detach;
          detach = () => {
            unwatch();
            detachHub();
          };
        }
        timers.push(keepAlive, recheck, setTimeout(() => finish(), timings.lifetimeMs));
      },
      cancel() {
        stop();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 16 * 1024 }),
  );
}
