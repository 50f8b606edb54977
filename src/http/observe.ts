import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Logger } from '../lib/logger.js';
import type { AppEnv } from './env.js';
import type { Metrics } from './metrics.js';

/** The route pattern that answered, or `unmatched` (so that raw paths never become labels). */
export function routePattern(c: Parameters<typeof matchedRoutes>[0]): string {
  const last = matchedRoutes(c).at(-1);
  return last && last.method !== 'ALL' ? last.path : 'unmatched';
}

type Series = { requests: { inc(): void }; duration: { observe(value: number): void } };
const seriesCache = new WeakMap<Metrics, Map<string, Series>>();

/** The labelled children of one label set, looked up once (prom-client hashes labels on every call). */
function seriesOf(metrics: Metrics, face: string, method: string, route: string, status: string): Series {
  let byKey = seriesCache.get(metrics);
  if (!byKey) seriesCache.set(metrics, (byKey = new Map()));
  const key = `${face} ${method} ${status} ${route}`;
  let series = byKey.get(key);
  if (!series) {
    const labels = { face, method, route, status };
    series = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
    byKey.set(key, series);
  }
  return series;
}

const accessLogs = new WeakMap<Logger, Logger>();

/**
 * The logger of the request line. Its fields are fixed and never secret, so it skips the parent's
 * wildcard redaction, which costs more than the rest of the line (measured by bench/by-host.ts).
 */
function accessLogOf(log: Logger): Logger {
  let access = accessLogs.get(log);
  if (!access) accessLogs.set(log, (access = log.child({}, { redact: { paths: [] } })));
  return access;
}

/**
 * The wide log line and the metrics of an answered request that began at `started`
 * (performance.now()). Only 5xx are logged as errors: a client's mistake is an info line.
 */
export function recordRequest(c: Context<AppEnv>, started: number): void {
  // c.get() rather than c.var: c.var builds a new object on every access.
  const deps = c.get('deps');
  const face = c.get('face');
  const seconds = (performance.now() - started) / 1000;
  const status = c.res.status;
  const method = c.req.method;
  const route = routePattern(c);
  const series = seriesOf(deps.metrics, face, method, route, String(status));
  series.requests.inc();
  series.duration.observe(seconds);
  const log = accessLogOf(deps.log);
  const level = status >= 500 ? 'error' : 'info';
  if (!log.isLevelEnabled(level)) return;
  log[level](
    {
      face,
      method,
      route,
      path: c.req.path,
      status,
      duration_ms: Math.round(seconds * 1e5) / 100,
      request_id: c.get('requestId'),
      caller: c.get('caller'),
      user_id: c.get('session')?.userId,
    },
    'request',
  );
}
