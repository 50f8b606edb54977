import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { createMiddleware } from 'hono/factory';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Deps } from '../../src/deps.js';
import type { ServerCache } from '../../src/features/servers/core/cache.js';
import { RouteLog } from '../../src/http/access-log.js';
import { isCrossSite } from '../../src/http/cross-site.js';
import type { AppEnv } from '../../src/http/env.js';
import { handleError } from '../../src/http/error-handler.js';
import { REQUEST_BUCKETS } from '../../src/http/request-metrics.js';
import { requestIdFor } from '../../src/http/request-id.js';
import { presetSecurityHeaders, viaTlsEdge } from '../../src/http/security-headers.js';
import { checkCaller } from '../../src/http/service-auth.js';
import { DomainError } from '../../src/lib/errors.js';

/**
 * The by-host route written as a Hono developer would write it with the same libraries, for the
 * side-by-side bench of the service's home-made pieces (docs/architecture.md): `app.use()`
 * middlewares for the request id and headers, the cross-site guard, metrics and the log line;
 * the token check as the route's middleware; @hono/zod-openapi's own validator for the path; the
 * same answer, headers, envelope, metrics and log line as the service's front door gives.
 */
export function honoNativeByHost(deps: Deps, cache: ServerCache) {
  const { requests, duration } = promClientMetrics(deps.metrics.registry);
  const logs = new Map<string, RouteLog>();
  const allowed = new Set(['proxy'] as const);
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw new DomainError('bad_request', result.error.issues[0]?.message);
    },
  });
  app.onError(handleError);
  app.use('*', async (c, next) => {
    const started = performance.now();
    c.set('deps', deps);
    const requestId = requestIdFor(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    presetSecurityHeaders(c, requestId, viaTlsEdge(c));
    await next();
    const seconds = (performance.now() - started) / 1000;
    const route = c.req.routePath;
    const labels = { face: 'internal', method: c.req.method, route, status: String(c.res.status) };
    requests.inc(labels);
    duration.observe(labels, seconds);
    let log = logs.get(route);
    if (!log) logs.set(route, (log = new RouteLog(deps.log, 'internal', route)));
    log.write(c.req.method, {
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round(seconds * 1e5) / 100,
      request_id: requestId,
      caller: c.get('caller'),
      user_id: undefined,
    });
  });
  app.use('*', async (c, next) => {
    if (isCrossSite(c)) throw new DomainError('cross_site');
    await next();
  });
  const byHost = createRoute({
    method: 'get',
    path: '/api/v1/servers/by-host/{host}',
    middleware: [createMiddleware<AppEnv>(async (c, next) => {
      checkCaller(c, allowed);
      await next();
    })] as const,
    request: { params: z.object({ host: z.string().min(1).max(255) }) },
    responses: { 200: { description: 'the server' } },
  });
  return app.openapi(byHost, (c) => {
    const server = cache.byHost(c.req.valid('param').host);
    if (!server || server.reserved) throw new DomainError('not_found', 'No server has this host.');
    return c.json(server.info, 200);
  });
}

/** The request metrics as prom-client's own Counter and Histogram, observed per request. */
function promClientMetrics(registry: Registry) {
  const labelNames = ['face', 'method', 'route', 'status'] as const;
  return {
    requests: new Counter({ name: 'bench_http_requests_total', help: 'bench', labelNames, registers: [registry] }),
    duration: new Histogram({ name: 'bench_http_request_duration_seconds', help: 'bench', labelNames, buckets: REQUEST_BUCKETS, registers: [registry] }),
  };
}
