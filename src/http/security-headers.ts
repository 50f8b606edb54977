import type { Context } from 'hono';

/** The headers contract section 9 puts on every answer. */
export const FIXED_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'",
};
export const HSTS = 'max-age=63072000; includeSubDomains';
const FIXED = Object.entries(FIXED_HEADERS);

/** HSTS only for requests that came through the TLS edge: a plain-HTTP answer must not pin hosts. */
export function viaTlsEdge(c: Context): boolean {
  const proto = c.req.header('x-forwarded-proto');
  return proto !== undefined && proto.split(',')[0]!.trim().toLowerCase() === 'https';
}

/**
 * Where the Node response cannot merge them (Bun, in-process requests): the headers go into the
 * context's prepared headers before the handler, so every answer built with `c.json()`/`c.body()`
 * is born with them.
 */
export function presetSecurityHeaders(c: Context, requestId: string, tls: boolean): void {
  c.header('X-Request-Id', requestId);
  for (const [name, value] of FIXED) c.header(name, value);
  if (tls) c.header('Strict-Transport-Security', HSTS);
}

/** After the handler: an answer built without the context (a raw `Response`) gets them too. */
export function ensureSecurityHeaders(res: Response, requestId: string, tls: boolean): void {
  const h = res.headers;
  if (h.get('X-Frame-Options') !== 'DENY') for (const [name, value] of FIXED) h.set(name, value);
  if (h.get('X-Request-Id') !== requestId) h.set('X-Request-Id', requestId);
  if (tls) {
    if (!h.has('Strict-Transport-Security')) h.set('Strict-Transport-Security', HSTS);
  } else if (h.has('Strict-Transport-Security')) {
    h.delete('Strict-Transport-Security');
  }
}
