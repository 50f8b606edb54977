import type { Registry } from 'prom-client';

export const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface RequestLabels {
  face: string;
  method: string;
  route: string;
  status: string;
}

/** One label set's handle: the front door looks it up once per route and status and keeps it. */
export interface RequestSeries {
  /** An answer timed in the latency histogram. */
  observe(seconds: number): void;
  /** A streamed answer that has ended, after `bytes`: counted, but a long stream is no latency. */
  streamed(bytes: number): void;
}

/** The label sets of each metric, in the order each first joined it (prom-client's order). */
interface Joined {
  requests: Figures[];
  durations: Figures[];
  streams: Figures[];
}

/** One label set's figures, bumped in place by its handle. */
class Figures implements RequestSeries {
  requests = 0;
  /** Answers per bucket (not cumulative), then those above the last bound. */
  readonly buckets = new Array<number>(REQUEST_BUCKETS.length + 1).fill(0);
  durationSum = 0;
  durationCount = 0;
  streamBytes = 0;
  #inRequests = false;
  #inDurations = false;
  #inStreams = false;

  constructor(
    readonly labels: RequestLabels,
    private readonly joined: Joined,
  ) {}

  observe(seconds: number): void {
    this.#countRequest();
    if (!this.#inDurations) {
      this.#inDurations = true;
      this.joined.durations.push(this);
    }
    let bucket = 0;
    while (bucket < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[bucket]!) bucket++;
    this.buckets[bucket]!++;
    this.durationSum += seconds;
    this.durationCount++;
  }

  streamed(bytes: number): void {
    this.#countRequest();
    if (!this.#inStreams) {
      this.#inStreams = true;
      this.joined.streams.push(this);
    }
    this.streamBytes += bytes;
  }

  /** prom-client's reset of one metric: the label set leaves it until its next answer. */
  forget(metric: 'requests' | 'durations' | 'streams'): void {
    if (metric === 'requests') {
      this.requests = 0;
      this.#inRequests = false;
    } else if (metric === 'durations') {
      this.buckets.fill(0);
      this.durationSum = 0;
      this.durationCount = 0;
      this.#inDurations = false;
    } else {
      this.streamBytes = 0;
      this.#inStreams = false;
    }
  }

  #countRequest(): void {
    if (!this.#inRequests) {
      this.#inRequests = true;
      this.joined.requests.push(this);
    }
    this.requests++;
  }
}

/** A value of a metric as prom-client's Registry formats it (its Counter's and Histogram's shape). */
interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  metricName?: string;
  exemplar?: null;
}

/**
 * A metric the registry reads as it reads prom-client's own: `get()` (labels merged, as
 * `getMetricsAsJSON` shows them) and `getForPromString()` (the text of `/metrics`), with the values
 * in the order and shape prom-client's Counter and Histogram give them, so the text is the same.
 */
class ReadOnlyMetric {
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly values: () => MetricValue[],
    readonly reset: () => void,
  ) {}

  async getForPromString() {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: this.aggregator };
  }

  async get() {
    const values = this.values().map(({ sharedLabels, labels, ...value }) => ({ ...value, labels: { ...labels, ...sharedLabels } }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

/**
 * `felis_http_requests_total`, `felis_http_request_duration_seconds` and
 * `felis_http_stream_bytes_total`: each label set's figures are kept in the handle the front door
 * holds, and read out when the registry is. prom-client's Counter and Histogram hash the label
 * object on every `inc` and `observe` (its `labels()` hashes again inside): about 1 µs of every
 * request on a quiet machine, 2-3 µs at load 12 (issue 46, wave 8); the text of /metrics is the same
 * (request-metrics.test.ts compares it with prom-client's).
 */
export class RequestMetrics {
  readonly #series = new Map<string, Figures>();
  readonly #joined: Joined = { requests: [], durations: [], streams: [] };

  constructor(registry: Registry) {
    const joined = this.#joined;
    // prom-client's reset() empties a metric; a handle the front door keeps joins it again at its next answer.
    const forget = (metric: 'requests' | 'durations' | 'streams') => () => {
      for (const figures of joined[metric]) figures.forget(metric);
      joined[metric].length = 0;
    };
    const counter = (name: string, help: string, metric: 'requests' | 'streams', value: (f: Figures) => number) =>
      new ReadOnlyMetric(name, help, 'counter', () => joined[metric].map((f) => ({ value: value(f), labels: f.labels as unknown as Record<string, string> })), forget(metric));
    const metrics = [
      counter('felis_http_requests_total', 'HTTP requests answered, by face, method, route pattern and status.', 'requests', (f) => f.requests),
      counter('felis_http_stream_bytes_total', 'Bytes of streamed answers (event streams, downloads), counted when each stream ends.', 'streams', (f) => f.streamBytes),
      new ReadOnlyMetric(
        'felis_http_request_duration_seconds',
        'Time to answer an HTTP request (until the response starts), by route pattern; streamed answers are not in it.',
        'histogram',
        () => joined.durations.flatMap((f) => histogramValues('felis_http_request_duration_seconds', f)),
        forget('durations'),
      ),
    ];
    for (const metric of metrics) registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The handle of one label set (the same one for equal labels). */
  seriesOf(labels: RequestLabels): RequestSeries {
    const key = `${labels.face} ${labels.method} ${labels.status} ${labels.route}`;
    let series = this.#series.get(key);
    if (!series) {
      series = new Figures({ face: labels.face, method: labels.method, route: labels.route, status: labels.status }, this.#joined);
      this.#series.set(key, series);
    }
    return series;
  }
}

/** A label set's histogram values as prom-client's Histogram gives them: cumulative buckets, +Inf, sum, count. */
function histogramValues(name: string, f: Figures): MetricValue[] {
  const sharedLabels = f.labels as unknown as Record<string, string>;
  let below = 0;
  const values: MetricValue[] = REQUEST_BUCKETS.map((bound, i) => {
    below += f.buckets[i]!;
    return { labels: { le: bound }, sharedLabels, value: below, metricName: `${name}_bucket`, exemplar: null };
  });
  values.push(
    { labels: { le: '+Inf' }, sharedLabels, value: f.durationCount, metricName: `${name}_bucket`, exemplar: null },
    { labels: {}, sharedLabels, value: f.durationSum, metricName: `${name}_sum` },
    { labels: {}, sharedLabels, value: f.durationCount, metricName: `${name}_count` },
  );
  return values;
}
