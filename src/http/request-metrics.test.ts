import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { REQUEST_BUCKETS, RequestMetrics } from './request-metrics.js';

/** The request metrics as prom-client's own Counter and Histogram kept them before (issue 46). */
function promClientMetrics(registry: Registry) {
  const labelNames = ['face', 'method', 'route', 'status'] as const;
  const registers = [registry];
  const requests = new Counter({ name: 'felis_http_requests_total', help: 'HTTP requests answered, by face, method, route pattern and status.', labelNames, registers });
  const streamBytes = new Counter({ name: 'felis_http_stream_bytes_total', help: 'Bytes of streamed answers (event streams, downloads), counted when each stream ends.', labelNames, registers });
  const duration = new Histogram({
    name: 'felis_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (until the response starts), by route pattern; streamed answers are not in it.',
    labelNames,
    buckets: REQUEST_BUCKETS,
    registers,
  });
  return {
    seriesOf: (labels: { face: string; method: string; route: string; status: string }) => ({
      observe: (seconds: number) => {
        requests.inc(labels);
        duration.observe(labels, seconds);
      },
      streamed: (bytes: number) => {
        requests.inc(labels);
        streamBytes.inc(labels, bytes);
      },
    }),
  };
}

describe('request metrics', () => {
  it('exposes a counter and a cumulative histogram per label set through the registry', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    const labels = { face: 'internal', method: 'GET', route: '/a/:id', status: '200' };
    const series = metrics.seriesOf(labels);
    expect(metrics.seriesOf({ ...labels })).toBe(series);
    for (const seconds of [0.0001, 0.0007, 0.003, 20]) series.observe(seconds);
    metrics.seriesOf({ ...labels, status: '404' }).observe(0.002);

    const text = await registry.metrics();
    const l = 'face="internal",method="GET",route="/a/:id"';
    expect(text).toContain('# TYPE felis_http_requests_total counter');
    expect(text).toContain(`felis_http_requests_total{${l},status="200"} 4`);
    expect(text).toContain(`felis_http_requests_total{${l},status="404"} 1`);
    expect(text).toContain('# TYPE felis_http_request_duration_seconds histogram');
    expect(text).toContain(`felis_http_request_duration_seconds_bucket{le="0.0005",${l},status="200"} 1`);
    expect(text).toContain(`felis_http_request_duration_seconds_bucket{le="0.001",${l},status="200"} 2`);
    expect(text).toContain(`felis_http_request_duration_seconds_bucket{le="0.005",${l},status="200"} 3`);
    expect(text).toContain(`felis_http_request_duration_seconds_bucket{le="10",${l},status="200"} 3`);
    expect(text).toContain(`felis_http_request_duration_seconds_bucket{le="+Inf",${l},status="200"} 4`);
    expect(text).toContain(`felis_http_request_duration_seconds_count{${l},status="200"} 4`);
    expect(text).toMatch(new RegExp(`felis_http_request_duration_seconds_sum\\{${l.replace(/[/:]/g, '\\$&')},status="200"\\} 20\\.0038`));
  });

  it('writes /metrics and its JSON exactly as prom-client’s own Counter and Histogram did, before and after a reset', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const sides = [new RequestMetrics(ours), promClientMetrics(theirs)];
    const play = (round: number) => {
      for (const side of sides) {
        const a = side.seriesOf({ face: 'internal', method: 'GET', route: '/api/v1/servers/by-host/:host', status: '200' });
        const b = side.seriesOf({ face: 'external', method: 'POST', route: '/api/v1/servers/:name/wake', status: '409' });
        const c = side.seriesOf({ face: 'external', method: 'GET', route: '/api/v1/servers/:name/console/stream', status: '200' });
        for (const seconds of [0.00003, 0.0005, 0.0006, 0.0041, 0.1, 0.7, 10, 11.5 + round]) a.observe(seconds);
        c.streamed(0);
        b.observe(0.02);
        c.streamed(4096 + round);
        a.observe(0.00002);
      }
    };
    play(0);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    play(1);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });
});
