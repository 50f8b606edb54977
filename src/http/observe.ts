import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from './env.js';

/** The route pattern that answered, or `unmatched` (so that raw paths never become labels). */
export function routePattern(c: Parameters<typeof matchedRoutes>[0]): string {
  const last = matchedRoutes(c).at(-1);
  return last && last.method !== 'ALL' ? last.path : 'unmatched';
}

/**
 * One wide log line and the request metrics per request. Only 5xx are logged as errors: a
 * client's mistake is an info line.
 */
export const observe = createMiddleware<AppEnv>(async (c, next) => {
  const started = performance.now();
  try {
    await next();
  } finally {
    const { deps, face } = c.var;
    const seconds = (performance.now() - started) / 1000;
    const status = c.res.status;
    const labels = { face, method: c.req.method, route: routePattern(c), status: String(status) };
    deps.metrics.httpRequests.inc(labels);
    deps.metrics.httpDuration.observe(labels, seconds);
    const line = {
      face,
      method: c.req.method,
      route: labels.route,
      path: c.req.path,
      status,
      duration_ms: Math.round(seconds * 1e5) / 100,
      request_id: c.var.requestId,
      caller: c.var.caller,
      user_id: c.var.session?.userId,
    };
    if (status >= 500) deps.log.error(line, 'request');
    else deps.log.info(line, 'request');
  }
});
