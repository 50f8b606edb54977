import type { Context } from 'hono';

const FIXED: Array<[string, string]> = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Content-Security-Policy', "default-src 'none'"],
];
const HSTS = 'max-age=63072000; includeSubDomains';

/** HSTS only for requests that came through the TLS edge: a plain-HTTP answer must not pin hosts. */
function viaTlsEdge(c: Context): boolean {
  return c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https';
}

/** Every header of contract section 9 this request's answer carries. */
export function securityHeaderList(c: Context): Array<[string, string]> {
  return viaTlsEdge(c) ? [...FIXED, ['Strict-Transport-Security', HSTS]] : FIXED;
}

/**
 * Contract section 9, before the handler: the headers go into the context's prepared headers, so
 * every response built with `c.json()`/`c.body()` (error envelopes included) is born with them and
 * no response object is rebuilt afterwards.
 */
export function presetSecurityHeaders(c: Context): boolean {
  for (const [name, value] of FIXED) c.header(name, value);
  const tls = viaTlsEdge(c);
  if (tls) c.header('Strict-Transport-Security', HSTS);
  return tls;
}

/** After the handler: a response built without the context (a raw `Response`) gets them too. */
export function ensureSecurityHeaders(c: Context, tls: boolean): void {
  const h = c.res.headers;
  if (h.get('X-Frame-Options') !== 'DENY') for (const [name, value] of FIXED) h.set(name, value);
  if (tls) {
    if (!h.has('Strict-Transport-Security')) h.set('Strict-Transport-Security', HSTS);
  } else if (h.has('Strict-Transport-Security')) {
    h.delete('Strict-Transport-Security');
  }
}
