import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestMetrics } from './request-metrics.js';

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
});
