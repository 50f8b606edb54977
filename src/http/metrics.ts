import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'face' | 'method' | 'route' | 'status'>;
  httpDuration: Histogram<'face' | 'method' | 'route' | 'status'>;
}

/** One registry per process (or per test), never prom-client's global one. */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'felis_' });
  const labelNames = ['face', 'method', 'route', 'status'] as const;
  return {
    registry,
    httpRequests: new Counter({
      name: 'felis_http_requests_total',
      help: 'HTTP requests answered, by face, method, route pattern and status.',
      labelNames,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'felis_http_request_duration_seconds',
      help: 'Time to answer an HTTP request (until the response starts), by route pattern.',
      labelNames,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}
