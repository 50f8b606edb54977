import type { Logger } from '../lib/logger.js';

/** The fields of the one wide line each answered request leaves (DESIGN.md: one line per request). */
export interface RequestLine {
  face: string;
  method: string;
  route: string;
  path: string;
  status: number;
  duration_ms: number;
  request_id: string;
  caller: string | undefined;
  user_id: string | undefined;
}

const pending = new Set<AccessLog>();
let exitHooked = false;

/**
 * The request lines of one logger, written in a batch once the answers of this turn of the event
 * loop have gone out. Formatting a line right after each answer cost the proxy's hot path several
 * times what the same work costs in a batch, where it runs warm (bench/by-host.ts). A line's `time`
 * is when the batch is written: within the same turn. Lines still pending at exit are written then.
 */
export class AccessLog {
  private lines: RequestLine[] = [];
  private readonly log: Logger;

  constructor(parent: Logger) {
    // The line's fields are fixed and never secret: no wildcard redaction, which costs more than the line.
    this.log = parent.child({}, { redact: { paths: [] } });
  }

  /** Whether a line of this status would be written at all (5xx are errors, the rest info). */
  wants(status: number): boolean {
    return this.log.isLevelEnabled(status >= 500 ? 'error' : 'info');
  }

  add(line: RequestLine): void {
    if (this.lines.length === 0) {
      pending.add(this);
      setImmediate(() => this.flush());
      if (!exitHooked) {
        exitHooked = true;
        process.once('exit', flushAccessLogs);
      }
    }
    this.lines.push(line);
  }

  flush(): void {
    const lines = this.lines;
    if (lines.length === 0) return;
    this.lines = [];
    pending.delete(this);
    for (const line of lines) {
      if (line.status >= 500) this.log.error(line, 'request');
      else this.log.info(line, 'request');
    }
  }
}

const accessLogs = new WeakMap<Logger, AccessLog>();

export function accessLogOf(log: Logger): AccessLog {
  let access = accessLogs.get(log);
  if (!access) accessLogs.set(log, (access = new AccessLog(log)));
  return access;
}

/** Writes every pending line now (at exit, and for tests that read the log right after a request). */
export function flushAccessLogs(): void {
  for (const log of pending) log.flush();
}
