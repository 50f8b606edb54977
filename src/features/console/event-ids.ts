import { z } from '@hono/zod-openapi';

/**
 * The ids of the console's and the build log's events, and where a `Last-Event-ID` resumes.
 *
 * The contract gives each line `id:` with unix seconds, but a whole second cannot say which of
 * that second's lines the client already has. So an id is the line's unix second with a fixed
 * six-digit suffix numbering the lines stamped in that second, in the log's order:
 * `1764201600.000003` is the fourth line of that second. Still a number of unix seconds, growing
 * as a number and as a string. The numbering comes from the shared source (the pod's log read
 * from a whole-second boundary, the build's stored rows in sequence order), never from a
 * replica's memory, so every replica gives a line the same id and a stream resumes on any of them
 * exactly after the last line the client got.
 */

/** Where a reader stands: line `index` (from 0) of unix second `second`; index -1 is before that second's first line. */
export interface StreamPosition {
  second: number;
  index: number;
}

const ID = /^(\d{1,12})(?:\.(\d{6}))?$/;

/**
 * The `Last-Event-ID` request header of both streams: one of our line ids, or (older clients) a
 * whole unix second. Anything else is refused with 400 `bad_request`.
 */
export const LastEventIdHeader = z
  .string()
  .regex(ID, 'Last-Event-ID is a line id (<unix second>.<six digits>) or a unix second')
  .openapi({
    description:
      'The `id:` of the last event the client got. A line id (`<unix second>.<six digits>`, the line’s number within its second) ' +
      'resumes exactly after that line, on any replica; a whole unix second (older clients) resumes from the first line of that second. ' +
      'Within one hour (and not in the future); otherwise the stream starts as without it.',
    example: '1764201600.000003',
  });

/** A line's id as it goes out. */
export function formatEventId(position: StreamPosition): string {
  return `${position.second}.${String(position.index).padStart(6, '0')}`;
}

/** Orders two positions: negative when `a` comes first. */
export function comparePositions(a: StreamPosition, b: StreamPosition): number {
  return a.second - b.second || a.index - b.index;
}

/**
 * Where a stream resumes for a `Last-Event-ID` (as the header schema let it through): after that
 * line, or from the first line of a whole second; undefined without one, or when its second is
 * more than `windowMs` old or in the future (the stream then starts as a new one does).
 */
export function resumePosition(lastEventId: string | undefined, nowMs: number, windowMs: number): StreamPosition | undefined {
  const match = lastEventId === undefined ? null : ID.exec(lastEventId);
  if (!match) return undefined;
  const second = Number(match[1]);
  if (second * 1000 > nowMs || nowMs - second * 1000 > windowMs) return undefined;
  return { second, index: match[2] === undefined ? -1 : Number(match[2]) };
}

/** Seconds behind the newest line's for which counts are kept (a log's stamps are near enough in order). */
const KEPT_SECONDS = 60;

/**
 * Numbers lines in the order of a log read from a whole-second boundary: a line's index is how
 * many lines before it in that order were stamped in its second. `counts` seeds it with the
 * lines already numbered (a resume of the build log). Stamps slightly out of order (a runtime's
 * stdout and stderr) still get distinct numbers; a line stamped more than a minute before a line
 * the log holds ahead of it is not a case a runtime makes.
 */
export class LineNumbering {
  readonly #counts = new Map<number, number>();
  #newest = Number.NEGATIVE_INFINITY;

  constructor(counts: Iterable<readonly [number, number]> = []) {
    for (const [second, count] of counts) {
      this.#counts.set(second, count);
      this.#newest = Math.max(this.#newest, second);
    }
    this.#prune();
  }

  next(timeMs: number): StreamPosition {
    const second = Math.floor(timeMs / 1000);
    const index = this.#counts.get(second) ?? 0;
    this.#counts.set(second, index + 1);
    if (second > this.#newest) {
      this.#newest = second;
      this.#prune();
    }
    return { second, index };
  }

  #prune(): void {
    for (const second of this.#counts.keys()) if (second < this.#newest - KEPT_SECONDS) this.#counts.delete(second);
  }
}
