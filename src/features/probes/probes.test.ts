import { describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { SERVICE_VERSION } from '../../version.js';

describe('probes', () => {
  const database = useTestDatabase();

  it('answers /healthz on both faces', async () => {
    const { internal, external } = createTestApps(createTestDeps(database()));
    for (const app of [internal, external]) {
      const res = await app.request('/healthz');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', version: SERVICE_VERSION });
    }
  });

  it('answers /readyz with ready when the database and the cluster answer', async () => {
    const { internal } = createTestApps(createTestDeps(database()));
    const res = await internal.request('/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready' });
  });

  it('answers /readyz 503 naming the cluster when it is unreachable, and logs it', async () => {
    const deps = createTestDeps(database());
    deps.cluster.setReachable(false);
    const res = await createTestApps(deps).internal.request('/readyz');
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
    expect(body.error.code).toBe('unavailable');
    expect(body.error.message).toContain('cluster');
    expect(body.error.request_id).toBe(res.headers.get('x-request-id'));
    expect(deps.captured.lines().some((l) => l.msg === 'readiness check failed' && l.dependency === 'cluster')).toBe(true);
  });

  it('answers /readyz 503 when the database does not answer in time', async () => {
    const real = database();
    const deps = createTestDeps({ ...real, ping: () => new Promise<void>(() => {}) });
    const started = Date.now();
    const res = await createTestApps(deps).internal.request('/readyz');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('database');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('keeps /readyz and /metrics off the external face', async () => {
    const { external } = createTestApps(createTestDeps(database()));
    expect((await external.request('/readyz')).status).toBe(404);
    expect((await external.request('/metrics')).status).toBe(404);
  });

  it('serves felis_ metrics labelled by route pattern, face and status, without a token', async () => {
    const deps = createTestDeps(database());
    const { internal, external } = createTestApps(deps);
    await external.request('/healthz');
    await internal.request('/no/such/path/123');
    const res = await internal.request('/metrics', { headers: bearer('proxy') });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('felis_http_requests_total{face="external",method="GET",route="/healthz",status="200"} 1');
    expect(text).toContain('route="unmatched",status="404"');
    expect(text).not.toContain('/no/such/path');
    expect(text).toContain('felis_http_request_duration_seconds_bucket');
  });
});
