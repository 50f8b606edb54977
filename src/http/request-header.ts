import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';

/**
 * Headers Node's parser keeps only the first copy of, where fetch's `Headers` joins every copy
 * (Node's `matchKnownFields`, @hono/node-server's `nonJoinedHeaders`).
 */
const FIRST_COPY_ONLY = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/**
 * A request header by its lower-case name, as `c.req.header(name)` gives it. On Node it is read
 * from the headers node:http already parsed, which costs a property read instead of @hono/node-server's
 * validated lookup (several per request on the proxy's hot path). Node joins repeated copies with
 * ", " as fetch does, except for the FIRST_COPY_ONLY names: a present one of those is read through
 * Hono so that repeats are joined the same way. Elsewhere (Bun, in-process requests) it is Hono's.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming === undefined) return c.req.header(name);
  const value = incoming.headers[name];
  if (value === undefined) return undefined;
  return typeof value === 'string' && !FIRST_COPY_ONLY.has(name) ? value : c.req.header(name);
}
