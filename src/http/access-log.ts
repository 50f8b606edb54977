import { pino } from 'pino';
import { levelField, timeFieldAt, type Logger } from '../lib/logger.js';

/**
 * The fields of the one wide line each answered request leaves (DESIGN.md: one line per request),
 * after those its route and method open it with (`lineOpening`).
 */
export interface RequestLine {
  path: string;
  status: number;
  duration_ms: number;
  /** Written as it is: the front door makes or accepts ids only of letters, digits, `-`, `_` and `=`. */
  request_id: string;
  caller: string | undefined;
  user_id: string | undefined;
}

/** How long a line may wait to be written, and how many may wait, before the batch is written. */
export const ACCESS_LOG_DELAY_MS = 20;
const MAX_PENDING = 512;
/** Room for a batch: MAX_PENDING lines of up to 500 bytes (a by-host line is about 330); a batch that outgrows it is written early. */
const BATCH_BYTES = 256 * 1024;

const pending = new Set<AccessLog>();
let exitHooked = false;

/**
 * The request lines of one logger, written in batches: at most ACCESS_LOG_DELAY_MS after the first
 * line of a batch, or at once when MAX_PENDING lines wait, with one write to the logger's
 * destination per batch. The lines are the ones pino writes for `log.info(line, 'request')`
 * (access-log.test.ts compares them); `time` is when the answer went out. They are formatted here,
 * as each answer goes out, because pino's per-call formatting, and a write per line, cost the
 * proxy's hot path about a tenth of its throughput (bench/by-host.ts). A line waits as UTF-8
 * bytes, off the JavaScript heap: kept as strings, waiting lines were copied by every young-
 * generation collection that met them, and a batch was re-read piece by piece when written. The
 * fields are fixed and never secret, so the logger's redaction does not apply. Lines still pending
 * at exit are written then.
 */
export class AccessLog {
  private bytes: Buffer | undefined;
  private used = 0;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  /** The opening of a line up to its own fields (level, time, bindings), for the last millisecond seen. */
  private stampedAt = -1;
  private infoOpening = '';
  private errorOpening = '';

  constructor(log: Logger) {
    this.log = log;
  }

  /** Whether a line of this status would be written at all (5xx are errors, the rest info). */
  wants(status: number): boolean {
    return this.log.isLevelEnabled(status >= 500 ? 'error' : 'info');
  }

  /** A line: `opening` is `lineOpening(face, method, route)`, made once per route and method. */
  add(opening: string, line: RequestLine): void {
    const now = Date.now();
    if (now !== this.stampedAt) this.stamp(now);
    const text = (line.status >= 500 ? this.errorOpening : this.infoOpening) + opening + fieldsOf(line);
    const most = text.length * 3; // bytes of UTF-8 a UTF-16 unit can take at most
    let bytes = this.bytes;
    if (bytes === undefined || this.used + most > bytes.length) bytes = this.makeRoom(most);
    this.used += bytes.write(text, this.used);
    if (this.count++ === 0) {
      pending.add(this);
      this.timer = setTimeout(() => this.flush(), ACCESS_LOG_DELAY_MS).unref();
      if (!exitHooked) {
        exitHooked = true;
        process.once('exit', flushAccessLogs);
      }
    }
    if (this.count >= MAX_PENDING) this.flush();
  }

  flush(): void {
    if (this.count === 0) return;
    // One flat string per batch: what any destination takes (pino's own writes strings).
    const text = this.bytes!.toString('utf8', 0, this.used);
    this.used = 0;
    this.count = 0;
    clearTimeout(this.timer);
    pending.delete(this);
    (this.pino[pino.symbols.streamSym] as { write(text: string): void }).write(text);
  }

  /** The batch buffer with room for `most` more bytes: the waiting lines written first if they are in the way. */
  private makeRoom(most: number): Buffer {
    if (this.used > 0) this.flush();
    if (this.bytes === undefined || most > this.bytes.length) this.bytes = Buffer.allocUnsafe(Math.max(BATCH_BYTES, most));
    return this.bytes;
  }

  private stamp(now: number): void {
    this.stampedAt = now;
    const middle = `${timeFieldAt(now)}${this.pino[pino.symbols.chindingsSym] as string},`;
    this.infoOpening = INFO + middle;
    this.errorOpening = ERROR + middle;
  }

  /** pino.symbols is pino's documented door to a logger's bindings and destination. */
  private get pino(): Record<symbol, unknown> {
    return this.log as unknown as Record<symbol, unknown>;
  }
}

/** The fields that open every line of one route and method: face, method and route pattern. */
export function lineOpening(face: string, method: string, route: string): string {
  return `"face":${JSON.stringify(face)},"method":${JSON.stringify(method)},"route":${JSON.stringify(route)}`;
}

/**
 * The rest of a line and its message, as `JSON.stringify` would write them (undefined fields left
 * out) but without walking an object: strings that need no escaping are quoted as they are, the
 * request id needs none, and the duration is written from its hundredths.
 */
function fieldsOf(line: RequestLine): string {
  let text =
    `,"path":${quoted(line.path)},"status":${line.status},"duration_ms":${decimalText(line.duration_ms)}` +
    `,"request_id":"${line.request_id}"`;
  if (line.caller !== undefined) text += `,"caller":${quoted(line.caller)}`;
  if (line.user_id !== undefined) text += `,"user_id":${quoted(line.user_id)}`;
  return `${text},"msg":"request"}\n`;
}

/** What JSON.stringify escapes in a string: quotes, backslashes, control characters, lone surrogates. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;
/** A string as JSON writes it: quoted as it is unless it holds what JSON escapes. */
function quoted(value: string): string {
  return ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/**
 * JSON's text of a duration kept to hundredths, built from whole numbers (whose texts V8 caches)
 * instead of converting a fraction on every line; anything else is left to JSON.stringify.
 */
export function decimalText(value: number): string {
  const hundredths = Math.round(value * 100);
  if (!(hundredths >= 0 && hundredths <= 0x3fffffff) || hundredths / 100 !== value) return JSON.stringify(value);
  const whole = Math.floor(hundredths / 100);
  const part = hundredths - whole * 100;
  if (part === 0) return `${whole}`;
  if (part % 10 === 0) return `${whole}.${part / 10}`;
  return part < 10 ? `${whole}.0${part}` : `${whole}.${part}`;
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
