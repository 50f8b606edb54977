import { Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics } from './request-metrics.js';

export interface Metrics {
  registry: Registry;
  requests: RequestMetrics;
}

/** One registry per process (or per test), never prom-client's global one. */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'felis_' });
  return { registry, requests: new RequestMetrics(registry) };
}
