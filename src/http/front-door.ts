import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Deps } from '../deps.js';
import { isCrossSite } from './cross-site.js';
import type { AppEnv, Face } from './env.js';
import { handleError } from './error-handler.js';
import { ApiError } from './errors.js';
import { recordRequest } from './observe.js';
import { ensureSecurityHeaders, presetSecurityHeaders, securityHeaderList } from './security-headers.js';

/** Inbound ids we keep: 1 to 128 of letters, digits, `-`, `_` and `=` (anything else is replaced). */
const REQUEST_ID_MAX = 128;
const REQUEST_ID = /^[\w\-=]+$/;

/** The Node response behind this request when @hono/node-server serves it. */
function nodeResponse(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return outgoing && typeof outgoing.setHeader === 'function' && !outgoing.headersSent ? outgoing : undefined;
}

/**
 * The shared stack of a face in one middleware: deps, request id, security headers, the
 * cross-site guard (before any authentication), then the log line and metrics. One layer instead of
 * five, because each async layer costs the proxy's hot path about as much as its own work does
 * (bench/by-host.ts).
 *
 * On Node the fixed headers are written on the Node response itself: Node merges them into the
 * answer, and the Hono response keeps plain headers, which @hono/node-server writes without
 * building a fetch `Headers` object (about 8 µs a request on Node 20). Elsewhere (Bun, in-process
 * requests) they go into the context's headers.
 */
export function frontDoor(face: Face, deps: Deps) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    c.set('deps', deps);
    c.set('face', face);
    const inbound = c.req.header('x-request-id');
    const id = inbound && inbound.length <= REQUEST_ID_MAX && REQUEST_ID.test(inbound) ? inbound : crypto.randomUUID();
    c.set('requestId', id);
    const node = nodeResponse(c);
    let tls = false;
    if (node) {
      node.setHeader('X-Request-Id', id);
      for (const [name, value] of securityHeaderList(c)) node.setHeader(name, value);
    } else {
      c.header('X-Request-Id', id);
      tls = presetSecurityHeaders(c);
    }
    try {
      if (isCrossSite(c)) c.res = handleError(new ApiError('cross_site'), c);
      else await next();
    } finally {
      if (!node) {
        ensureSecurityHeaders(c, tls);
        if (c.res.headers.get('X-Request-Id') !== id) c.res.headers.set('X-Request-Id', id);
      }
      recordRequest(c, started);
    }
  });
}
