import type { Counter, Registry } from 'prom-client';

/**
 * `felis_webhook_deliveries_total`, registered by the fleet feature's collectors (which this
 * feature may not import: the fleet reads the outbox). Absent when no collector is registered.
 */
export function fleetCounterOf(registry: Registry): Counter<'outcome'> | undefined {
  return registry.getSingleMetric('felis_webhook_deliveries_total') as Counter<'outcome'> | undefined;
}
