import { Counter, Histogram, type Registry } from 'prom-client';

export type SourceOutcome =
  | 'validated'
  | 'not_validated'
  | 'unparseable_id'
  | 'failed_transport'
  | 'failed_timeout'
  | 'failed_redirect'
  | 'failed_status'
  | 'failed_malformed'
  | 'failed_profile';

export interface VerifierMetrics {
  sourceRequests: Counter<'source'>;
  sourceOutcomes: Counter<'source' | 'outcome'>;
  sourceDuration: Histogram<'source' | 'outcome'>;
  nameLookups: Counter<'result'>;
}

/** Registered once per registry: a second verifier on the same registry shares the collectors. */
function registered<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

export function verifierMetrics(registry: Registry): VerifierMetrics {
  const registers = [registry];
  return {
    sourceRequests: registered(
      registry,
      'felis_session_source_requests_total',
      () =>
        new Counter({
          name: 'felis_session_source_requests_total',
          help: 'hasJoined requests sent to each session source.',
          labelNames: ['source'],
          registers,
        }),
    ),
    sourceOutcomes: registered(
      registry,
      'felis_session_source_outcomes_total',
      () =>
        new Counter({
          name: 'felis_session_source_outcomes_total',
          help: 'hasJoined answers of each session source, by outcome.',
          labelNames: ['source', 'outcome'],
          registers,
        }),
    ),
    sourceDuration: registered(
      registry,
      'felis_session_source_duration_seconds',
      () =>
        new Histogram({
          name: 'felis_session_source_duration_seconds',
          help: 'Time each session source took to answer hasJoined, by outcome.',
          labelNames: ['source', 'outcome'],
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
          registers,
        }),
    ),
    nameLookups: registered(
      registry,
      'felis_session_name_lookups_total',
      () =>
        new Counter({
          name: 'felis_session_name_lookups_total',
          help: 'Third-party names checked at the primary profile API: cached, taken, free or failed (counted as taken).',
          labelNames: ['result'],
          registers,
        }),
    ),
  };
}
