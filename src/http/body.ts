import type { Context } from 'hono';
import type { AppEnv } from './env.js';
import { bodyLimit } from 'hono/body-limit';
import { DomainError } from '../lib/errors.js';
import { requestHeader } from './request-header.js';

export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * Whether the request declared a body. On HTTP/1.1 that is a Transfer-Encoding or a Content-Length
 * above zero: the proxy's Java client sends `Content-Length: 0` on bodiless requests. Without
 * either header a body is only present in in-process requests (tests), where the Request says so.
 */
export function declaresBody(c: Context<AppEnv>): boolean {
  const incoming = c.env?.incoming;
  const transferEncoding = requestHeader(c, 'transfer-encoding');
  const length = requestHeader(c, 'content-length');
  if (transferEncoding !== undefined || length !== undefined) return headersDeclareBody(transferEncoding, length);
  // GET and HEAD never carry one, and reading `Request.body` allocates a stream on some runtimes.
  if (incoming !== undefined || c.req.method === 'GET' || c.req.method === 'HEAD') return false;
  return c.req.raw.body !== null;
}

/** The HTTP/1.1 rule of `declaresBody`, from the two headers (the runtime's body-rate guard uses it too). */
export function headersDeclareBody(transferEncoding: string | null | undefined, contentLength: string | null | undefined): boolean {
  if (transferEncoding != null) return true;
  return contentLength != null && contentLength.trim() !== '0';
}

export function isJsonMediaType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

/** Reads the whole body within 1 MiB, counted on the bytes themselves (a chunked body too): 413. */
export const limitJsonBody = bodyLimit({
  maxSize: JSON_BODY_LIMIT,
  onError: () => {
    throw new DomainError('too_large');
  },
});

/**
 * JSON body rules (contract section 7), the part decided by the headers: a declared body must be
 * `application/json` (415) and must not announce more than 1 MiB (413). Routes that read a body
 * count its bytes as well (limitJsonBody); malformed JSON and unknown fields are the validator's 400.
 */
export function checkDeclaredJsonBody(c: Context<AppEnv>): void {
  if (!declaresBody(c)) return;
  if (!isJsonMediaType(requestHeader(c, 'content-type'))) throw new DomainError('unsupported_media_type');
  const length = requestHeader(c, 'content-length');
  if (length !== undefined && requestHeader(c, 'transfer-encoding') === undefined && Number.parseInt(length, 10) > JSON_BODY_LIMIT) {
    throw new DomainError('too_large');
  }
}

/** How deep arrays and objects may nest in a JSON body: no route's schema comes near it. */
export const JSON_MAX_DEPTH = 64;

/**
 * Refuses (400 `bad_request`) a JSON text nested deeper than JSON_MAX_DEPTH, in one pass over its
 * characters before it is parsed: 600 KB of brackets cost 50 times a small body to parse and walk
 * (issue 30), and stall every other answer on the event loop. Brackets inside strings do not count.
 */
export function refuseDeepJson(text: string, maxDepth = JSON_MAX_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // a backslash: the next character is escaped
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > maxDepth) throw new DomainError('bad_request', `The JSON body nests deeper than ${maxDepth} levels.`);
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
}
