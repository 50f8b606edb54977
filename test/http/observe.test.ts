import { describe, expect, it } from 'vitest';
import { createTestApp, createTestApps, createTestDeps, bearer, jsonRequest } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { BOOM_PATH, ECHO_PATH, fixtureRoutes } from '../helpers/fixture-routes.js';

type Line = Record<string, unknown>;
const requestLines = (lines: Line[]) => lines.filter((l) => l.msg === 'request');

describe('request log line and metrics', () => {
  const database = useTestDatabase();

  it('logs one JSON line per request with method, route pattern, status, duration, request id and caller', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, fixtureRoutes());
    const res = await app.request(
      '/api/v1/fixture/items/zz9',
      jsonRequest('PUT', { label: 'x' }, { ...bearer('ops'), 'X-Request-Id': 'log-line-1' }),
    );
    expect(res.status).toBe(200);
    const lines = requestLines(deps.captured.lines());
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatchObject({
      level: 'info',
      service: 'felis',
      face: 'internal',
      method: 'PUT',
      route: '/api/v1/fixture/items/:id',
      path: '/api/v1/fixture/items/zz9',
      status: 200,
      request_id: 'log-line-1',
      caller: 'ops',
    });
    expect(typeof line.duration_ms).toBe('number');
    expect(line.duration_ms as number).toBeGreaterThanOrEqual(0);
    expect(typeof line.time).toBe('string');
  });

  it('logs the caller even when it is refused, never the token', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, fixtureRoutes());
    expect((await app.request(ECHO_PATH, jsonRequest('POST', { name: 'a', count: 1 }, bearer('build')))).status).toBe(403);
    const [line] = requestLines(deps.captured.lines());
    expect(line).toMatchObject({ status: 403, caller: 'build', route: ECHO_PATH });
    expect(JSON.stringify(deps.captured.lines())).not.toContain('test-build-token');
  });

  it('logs client mistakes at info, unexpected failures at error, and unmatched paths as unmatched', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, fixtureRoutes());
    await app.request('/no/such/thing');
    await app.request(BOOM_PATH);
    const [notFound, boom] = requestLines(deps.captured.lines());
    expect(notFound).toMatchObject({ level: 'info', status: 404, route: 'unmatched', path: '/no/such/thing' });
    expect(boom).toMatchObject({ level: 'error', status: 500, route: BOOM_PATH });
    expect(notFound!.caller).toBeUndefined();
  });

  it('honours LOG_LEVEL: at warn, a successful request writes no line', async () => {
    const deps = createTestDeps(database(), { env: { LOG_LEVEL: 'warn' } });
    const app = createTestApp('internal', deps, fixtureRoutes());
    await app.request('/api/v1/fixture/items/a1');
    expect(requestLines(deps.captured.lines())).toHaveLength(0);
    await app.request(BOOM_PATH);
    expect(requestLines(deps.captured.lines())).toHaveLength(1);
  });

  it('counts requests and durations labelled by face, method, route pattern and status', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, fixtureRoutes());
    await app.request('/api/v1/fixture/items/a1');
    await app.request('/api/v1/fixture/items/b2');
    await app.request(ECHO_PATH, jsonRequest('POST', { name: 'a', count: 1 }));
    await app.request('/api/v1/fixture/items/a1', { method: 'DELETE' });
    const text = await deps.metrics.registry.metrics();
    expect(text).toContain(
      'felis_http_requests_total{face="internal",method="GET",route="/api/v1/fixture/items/:id",status="200"} 2',
    );
    expect(text).toContain('felis_http_requests_total{face="internal",method="POST",route="/api/v1/fixture/echo",status="401"} 1');
    expect(text).toContain('felis_http_requests_total{face="internal",method="DELETE",route="unmatched",status="405"} 1');
    expect(text).toContain(
      'felis_http_request_duration_seconds_count{face="internal",method="GET",route="/api/v1/fixture/items/:id",status="200"} 2',
    );
    expect(text).not.toContain('/items/a1');
  });

  it('exposes default process metrics with the felis_ prefix on the real service registry', async () => {
    const { createMetrics } = await import('../../src/http/metrics.js');
    const metrics = createMetrics();
    const text = await metrics.registry.metrics();
    expect(text).toContain('felis_process_cpu_user_seconds_total');
    expect(text).toContain('felis_nodejs_eventloop_lag_seconds');
    for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) expect(line).toMatch(/^felis_/);
  });

  it('labels the external face as external', async () => {
    const deps = createTestDeps(database());
    await createTestApps(deps).external.request('/healthz');
    expect(await deps.metrics.registry.metrics()).toContain('face="external",method="GET",route="/healthz",status="200"');
  });
});
