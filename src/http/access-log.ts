import type { Logger } from '../lib/logger.js';

/**
 * The fields of the one wide line each answered request leaves (DESIGN.md: one line per request),
 * after the bindings of its route and method (face, method, route).
 */
export interface RequestLine {
  path: string;
  status: number;
  duration_ms: number;
  request_id: string;
  caller: string | undefined;
  user_id: string | undefined;
  /** A streamed answer: the bytes sent, and whether the client left before its end. */
  bytes?: number;
  aborted?: boolean;
  /** A sampled read's line: how many successful answers it stands for, itself included (HotReadSampler). */
  sampled?: number;
}

/** A sampled read's answer slower than this is always logged, as is every error. */
export const SLOW_ANSWER_SECONDS = 0.1;

/**
 * The one rule of which answers' lines a sampler may leave out: a fast (under 100 ms) successful
 * (2xx) read, of a hot read (the proxy's lookups, the probes) or of a signed-in user. Every error,
 * every other non-2xx answer, every write and every slow answer leaves its line.
 */
export function mayBeSampled(read: boolean, status: number, seconds: number): boolean {
  return read && status >= 200 && status < 300 && seconds < SLOW_ANSWER_SECONDS;
}
/** A sampled route writes a line at least this often while it answers, however few answers came. */
const SAMPLED_LINE_EVERY_MS = 1000;

/**
 * Which of one route's sampled answers (`mayBeSampled`: the proxy's by-host, the probes, a
 * signed-in user's reads) leave their log line: one of every `every`, and any answer that comes a
 * second or more after the last line written, so a quiet route keeps every line and a busy one
 * writes `every` times fewer. The line written says how many answers it stands for (`sampled`), so
 * the count of answers can be rebuilt from the log; the metrics count every answer. Errors, slow
 * answers and writes never come here (pipeline.ts).
 */
export class HotReadSampler {
  #pending = 0;
  #lastLineAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly every: number) {}

  /** An answer at `now` (performance.now() ms): 0 to leave its line out, else the count its line stands for. */
  take(now: number): number {
    const count = ++this.#pending;
    if (count < this.every && now - this.#lastLineAt < SAMPLED_LINE_EVERY_MS) return 0;
    this.#pending = 0;
    this.#lastLineAt = now;
    return count;
  }
}

/**
 * The request log of one route: a pino child logger per method, bound to face, method and route
 * once, so a line serialises only its own fields. The line's fields are fixed and never secret,
 * so the child drops the logger's wildcard redaction, which cost the hot path more than the rest
 * of the line (issue 11). 5xx lines are errors, the rest info.
 */
export class RouteLog {
  private readonly byMethod = new Map<string, Logger>();

  constructor(
    private readonly log: Logger,
    private readonly face: string,
    private readonly route: string,
  ) {}

  write(method: string, line: RequestLine): void {
    let child = this.byMethod.get(method);
    if (child === undefined) {
      child = this.log.child({ face: this.face, method, route: this.route }, { redact: [] });
      this.byMethod.set(method, child);
    }
    if (line.status >= 500) child.error(line, 'request');
    else child.info(line, 'request');
  }
}
