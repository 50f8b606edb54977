import type { Context } from 'hono';
import type { AppEnv } from './env.js';

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
 * from what node:http already parsed, which costs a property read instead of @hono/node-server's
 * lookup (several per request on the proxy's hot path). Node joins repeated copies with ", " as
 * fetch does, except for the FIRST_COPY_ONLY names: those are gathered from the raw header list
 * and joined the same way, so a repeat is never silently dropped. Elsewhere (Bun, in-process
 * requests) it is Hono's.
 */
export function requestHeader<E extends AppEnv>(c: Context<E>, name: string): string | undefined {
  const incoming = c.env?.incoming;
  if (incoming === undefined) return c.req.header(name);
  if (FIRST_COPY_ONLY.has(name)) return joinedCopies(incoming.rawHeaders, name);
  const value = incoming.headers[name];
  return typeof value === 'string' || value === undefined ? value : c.req.header(name);
}

/** Every copy of a header in Node's raw list (names as sent, values already trimmed), joined with ", ". */
function joinedCopies(raw: string[], name: string): string | undefined {
  let joined: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const sent = raw[i]!;
    if (isHeaderName(sent, name)) {
      joined = joined === undefined ? raw[i + 1]! : `${joined}, ${raw[i + 1]!}`;
    }
  }
  return joined;
}

/**
 * Whether a header name (an HTTP token, as node:http lets through) is `lower`, a name of lower-case
 * letters and `-`, in any case, without making a lower-cased copy: setting the 0x20 bit maps only
 * A–Z onto a–z and leaves `-` and the other token characters off a–z.
 */
export function isHeaderName(name: string, lower: string): boolean {
  if (name.length !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) if ((name.charCodeAt(i) | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}
