import { createMiddleware } from 'hono/factory';
import type { Deps } from '../deps.js';
import { isCrossSite } from './cross-site.js';
import type { AppEnv, Face } from './env.js';
import { handleError } from './error-handler.js';
import { ApiError } from './errors.js';
import { recordRequest } from './observe.js';
import { ensureSecurityHeaders, presetSecurityHeaders } from './security-headers.js';

/** Inbound ids we keep: 1 to 128 of letters, digits, `-`, `_` and `=` (anything else is replaced). */
const REQUEST_ID_MAX = 128;
const REQUEST_ID = /^[\w\-=]+$/;

/**
 * The shared stack of a face in one middleware: deps, request id, security headers, the
 * cross-site guard (before any authentication), then the log line and metrics. One layer instead of
 * five, because each async layer costs the proxy's hot path about as much as its own work does
 * (bench/by-host.ts).
 */
export function frontDoor(face: Face, deps: Deps) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    c.set('deps', deps);
    c.set('face', face);
    const inbound = c.req.header('x-request-id');
    const id = inbound && inbound.length <= REQUEST_ID_MAX && REQUEST_ID.test(inbound) ? inbound : crypto.randomUUID();
    c.set('requestId', id);
    c.header('X-Request-Id', id);
    const tls = presetSecurityHeaders(c);
    try {
      if (isCrossSite(c)) c.res = handleError(new ApiError('cross_site'), c);
      else await next();
    } finally {
      ensureSecurityHeaders(c, tls);
      if (c.res.headers.get('X-Request-Id') !== id) c.res.headers.set('X-Request-Id', id);
      recordRequest(c, started);
    }
  });
}
