import { pino } from 'pino';
import { levelField, timeFieldAt, type Logger } from '../lib/logger.js';

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

/** How long a line may wait to be written, and how many may wait, before the batch is written. */
export const ACCESS_LOG_DELAY_MS = 20;
const MAX_PENDING = 512;

const pending = new Set<AccessLog>();
let exitHooked = false;

/**
 * The request lines of one logger, written in batches: at most ACCESS_LOG_DELAY_MS after the first
 * line of a batch, or at once when MAX_PENDING lines wait, with one write to the logger's
 * destination per batch. The lines are the ones pino writes for `log.info(line, 'request')`
 * (access-log.test.ts compares them); `time` is when the answer went out. They are formatted here
 * because pino's per-call formatting, and a write per line, cost the proxy's hot path about a
 * tenth of its throughput (bench/by-host.ts). The fields are fixed and never secret, so the
 * logger's redaction does not apply. Lines still pending at exit are written then.
 */
export class AccessLog {
  private lines: RequestLine[] = [];
  private times: number[] = [];
  private timer: NodeJS.Timeout | undefined;
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
      this.timer = setTimeout(() => this.flush(), ACCESS_LOG_DELAY_MS).unref();
      if (!exitHooked) {
        exitHooked = true;
        process.once('exit', flushAccessLogs);
      }
    }
    this.lines.push(line);
    this.times.push(Date.now());
    if (this.lines.length >= MAX_PENDING) this.flush();
  }

  flush(): void {
    const { lines, times } = this;
    if (lines.length === 0) return;
    this.lines = [];
    this.times = [];
    clearTimeout(this.timer);
    pending.delete(this);
    // pino.symbols is pino's documented door to a logger's bindings and destination.
    const logger = this.log as unknown as Record<symbol, unknown>;
    const bindings = `${logger[pino.symbols.chindingsSym] as string},`;
    let text = '';
    let at = -1;
    let time = '';
    for (const [i, line] of lines.entries()) {
      if (times[i] !== at) time = timeFieldAt((at = times[i]!));
      text += (line.status >= 500 ? ERROR : INFO) + time + bindings + fieldsOf(line);
    }
    (logger[pino.symbols.streamSym] as { write(text: string): void }).write(text);
  }
}

/**
 * A line's own fields and its message, as `JSON.stringify(line)` would write them (undefined ones
 * left out) but without walking an object: each string is quoted on its own, and the few that
 * repeat on every line (face, method, route, caller) are quoted once.
 */
function fieldsOf(line: RequestLine): string {
  let text =
    `"face":${quotedOnce(line.face)},"method":${quotedOnce(line.method)},"route":${quotedOnce(line.route)}` +
    `,"path":${JSON.stringify(line.path)},"status":${line.status},"duration_ms":${line.duration_ms}` +
    `,"request_id":${JSON.stringify(line.request_id)}`;
  if (line.caller !== undefined) text += `,"caller":${quotedOnce(line.caller)}`;
  if (line.user_id !== undefined) text += `,"user_id":${JSON.stringify(line.user_id)}`;
  return `${text},"msg":"request"}\n`;
}

/** Face, method, route pattern and caller come from small fixed sets (a method from Node's parser). */
const QUOTED_MAX = 1_000;
const quoted = new Map<string, string>();
function quotedOnce(value: string): string {
  let text = quoted.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    if (quoted.size < QUOTED_MAX) quoted.set(value, text);
  }
  return text;
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
