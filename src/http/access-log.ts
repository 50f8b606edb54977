import { pino } from 'pino';
import { levelField, timeField, type Logger } from '../lib/logger.js';

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
 * loop have gone out: one write to the logger's destination per batch. The lines are the ones pino
 * writes for `log.info(line, 'request')` (access-log.test.ts compares them), formatted here because
 * pino's per-call formatting and its write per line cost the proxy's hot path about a tenth of its
 * throughput (bench/by-host.ts). A line's `time` is when the batch is written: within the same turn.
 * The fields are fixed and never secret, so the logger's redaction does not apply. Lines still
 * pending at exit are written then.
 */
export class AccessLog {
  private lines: RequestLine[] = [];
  private readonly log: Logger;

  constructor(log: Logger) {
    this.log = log;
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
    // pino.symbols is pino's documented door to a logger's bindings and destination.
    const logger = this.log as unknown as Record<symbol, unknown>;
    const after = `${timeField()}${logger[pino.symbols.chindingsSym] as string},`;
    let text = '';
    for (const line of lines) {
      const fields = JSON.stringify(line);
      text += `${line.status >= 500 ? ERROR : INFO}${after}${fields.slice(1, -1)},"msg":"request"}\n`;
    }
    (logger[pino.symbols.streamSym] as { write(text: string): void }).write(text);
  }
}

const opening = (label: string) => `{${JSON.stringify(levelField(label)).slice(1, -1)}`;
const INFO = opening('info');
const ERROR = opening('error');

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
