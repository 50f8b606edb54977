import type { Context } from 'hono';
import { DigestCheck, expectedSha256 } from './content-digest.js';
import type { AppEnv } from './env.js';
import { DomainError } from '../lib/errors.js';
import { requestHeader } from './request-header.js';

/** The most a raw body may carry, named as the 413 names it (a setting's name, e.g. `part_max_bytes`). */
export interface BodyLimit {
  name: string;
  /** Bytes, or read at request time: a setting, the room left in an upload. */
  bytes: number | ((c: Context<AppEnv>) => number | Promise<number>);
}

export interface RawBodyOptions {
  limit: BodyLimit;
  /** `required`: a body without `Content-Digest` is refused (400). `optional` (default): verified when sent. */
  digest?: 'required' | 'optional';
}

/** A raw-body route's rule: its options and the media types its OpenAPI body lists. */
export interface RawBodyRule {
  mediaTypes: readonly string[];
  limit: BodyLimit;
  digest: 'required' | 'optional';
}

export const tooLarge = (name: string, bytes: number) =>
  new DomainError('too_large', `The request body is larger than ${name} (${bytes} bytes).`);

/** The media type of a Content-Type, lower-cased, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0]!.trim().toLowerCase();
  return type ? type : undefined;
}

/**
 * The body of a raw-body route, read as it arrives: iterate it (or take `stream()`) and write each
 * chunk to its destination; nothing holds it whole. The iteration throws 413 `too_large` past the
 * limit and, after the last byte, 400 `digest_mismatch` when a `Content-Digest` was sent and does not
 * match: a destination must commit only once the iteration has ended without throwing. `sha256` is
 * the verified digest (hex) from then on.
 */
export class RawBody implements AsyncIterable<Uint8Array> {
  /** Bytes read so far. */
  received = 0;
  private read = false;
  private verified: string | undefined;

  constructor(
    private readonly source: ReadableStream<Uint8Array> | null,
    readonly mediaType: string,
    readonly limit: { name: string; bytes: number },
    /** The Content-Length the client declared, when it declared one. */
    readonly declaredLength: number | undefined,
    private readonly digest: DigestCheck,
  ) {}

  /** The sha-256 (hex) of the whole body, once it has been read to its end and verified. */
  get sha256(): string {
    if (this.verified === undefined) throw new Error('the request body has not been read to its end');
    return this.verified;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array, void, undefined> {
    if (this.read) throw new Error('the request body can be read once');
    this.read = true;
    const reader = this.source?.getReader();
    if (reader === undefined) {
      this.verified = this.digest.finish();
      return;
    }
    let ended = false;
    try {
      for (;;) {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (cause) {
          // The client went away or broke the framing: its mistake, never our 500.
          throw new DomainError('bad_request', 'The request body ended before it was complete.', { cause });
        }
        if (step.done) break;
        this.received += step.value.byteLength;
        if (this.received > this.limit.bytes) throw tooLarge(this.limit.name, this.limit.bytes);
        this.digest.update(step.value);
        yield step.value;
      }
      ended = true;
      this.verified = this.digest.finish();
    } finally {
      if (!ended) await reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }

  /** The body as a web stream, for destinations that take one (S3, a file). */
  stream(): ReadableStream<Uint8Array> {
    const chunks = this[Symbol.asyncIterator]();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await chunks.next();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          controller.error(err);
        }
      },
      cancel: async () => {
        await chunks.return(undefined);
      },
    });
  }

  /** The whole body in memory: only for small limits. */
  async bytes(): Promise<Buffer> {
    const parts: Uint8Array[] = [];
    for await (const chunk of this) parts.push(chunk);
    return Buffer.concat(parts);
  }
}

/**
 * The body rules of a raw-body route, decided from the headers before anything is read: 415 for a
 * media type it does not list (or a content coding), 413 for a declared length over the limit that
 * applies now, 400 for a malformed or missing-when-required `Content-Digest`. Then the body is the
 * handler's, as `c.var.rawBody`.
 */
export async function openRawBody(c: Context<AppEnv>, rule: RawBodyRule): Promise<void> {
  const mediaType = mediaTypeOf(requestHeader(c, 'content-type'));
  if (mediaType === undefined || !rule.mediaTypes.includes(mediaType)) {
    throw new DomainError('unsupported_media_type', `The request body must be ${rule.mediaTypes.join(' or ')}.`);
  }
  const coding = requestHeader(c, 'content-encoding');
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    throw new DomainError('unsupported_media_type', 'A content coding is not accepted on this body.');
  }
  const bytes = typeof rule.limit.bytes === 'function' ? await rule.limit.bytes(c) : rule.limit.bytes;
  const lengthHeader = requestHeader(c, 'content-length');
  const declaredLength = lengthHeader !== undefined && /^\d+$/.test(lengthHeader.trim()) ? Number(lengthHeader) : undefined;
  if (declaredLength !== undefined && declaredLength > bytes) throw tooLarge(rule.limit.name, bytes);
  const digestHeader = requestHeader(c, 'content-digest');
  if (digestHeader === undefined && rule.digest === 'required') {
    throw new DomainError('bad_request', 'This upload needs a Content-Digest: sha-256=:<base64>: header.');
  }
  const expected = digestHeader === undefined ? undefined : expectedSha256(digestHeader);
  c.set('rawBody', new RawBody(c.req.raw.body, mediaType, { name: rule.limit.name, bytes }, declaredLength, new DigestCheck(expected)));
}

/** The body of the route being served; only raw-body routes have one. */
export function rawBodyOf<E extends AppEnv>(c: Context<E>): RawBody {
  const body = c.get('rawBody');
  if (body === undefined) throw new Error('this route does not declare a raw body');
  return body;
}
