import { Readable } from 'node:stream';
import type { Context } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { ApiError } from '../../http/errors.js';
import { requestHeader } from '../../http/request-header.js';
import { sha256OfContentDigest } from './content-digest.js';
import type { IncomingPart } from './upload.js';

const CONTEXT_MEDIA_TYPES = new Set(['application/gzip', 'application/x-gzip', 'application/octet-stream']);

/**
 * The request's raw body as a part: a gzip or octet-stream media type (415 otherwise), its declared
 * length, and the sha-256 its `Content-Digest` names (400 when malformed, or missing where required).
 */
export function incomingPart(c: Context<AppEnv>, options: { digestRequired: boolean }): IncomingPart {
  const mediaType = requestHeader(c, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  if (!mediaType || !CONTEXT_MEDIA_TYPES.has(mediaType)) {
    throw new ApiError('unsupported_media_type', 'The context is sent as application/gzip (or application/octet-stream).');
  }
  const digestHeader = requestHeader(c, 'content-digest');
  const sha256 = sha256OfContentDigest(digestHeader);
  if (digestHeader !== undefined && !sha256) throw new ApiError('bad_request', 'Content-Digest must carry sha-256=:<base64>: (RFC 9530).');
  if (!sha256 && options.digestRequired) throw new ApiError('bad_request', 'Each part carries a Content-Digest: sha-256=:<base64>:.');
  const lengthHeader = requestHeader(c, 'content-length');
  const length = lengthHeader !== undefined && /^\d{1,16}$/.test(lengthHeader.trim()) ? Number(lengthHeader) : undefined;
  const body = c.req.raw.body;
  return {
    body: body ? (Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>) as AsyncIterable<Uint8Array>) : emptyBody(),
    length,
    sha256,
  };
}

async function* emptyBody(): AsyncIterable<Uint8Array> {}
