import { describe, expect, it } from 'vitest';
import { bearer, createTestApp, createTestDeps, errorOf } from '../../test/helpers/app.js';
import { useTestDatabase } from '../../test/helpers/database.js';
import { CONTRACT_HEADERS, frontDoorProbeRoutes } from '../../test/helpers/fixture-routes.js';
import { identifyCaller } from './service-auth.js';

describe('the front door (shared stack of both faces)', () => {
  const database = useTestDatabase();

  it('sets the contract headers and a request id on answers, errors, 404s and raw responses', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, frontDoorProbeRoutes());
    for (const [path, status] of [['/t/json', 200], ['/t/raw', 200], ['/t/throw', 409], ['/t/crash', 500], ['/nowhere', 404], ['/t/post', 405]] as const) {
      const res = await app.request(path);
      expect(res.status, path).toBe(status);
      for (const [name, value] of Object.entries(CONTRACT_HEADERS)) expect(res.headers.get(name), `${path} ${name}`).toBe(value);
      expect(res.headers.get('strict-transport-security'), path).toBeNull();
      expect(res.headers.get('x-request-id'), path).toMatch(/^[0-9a-f-]{36}$/);
      if (status >= 400) expect((await errorOf(res)).request_id).toBe(res.headers.get('x-request-id'));
    }
  });

  it('adds HSTS only behind the TLS edge, keeps a well-formed inbound request id and replaces a bad one', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('external', deps, frontDoorProbeRoutes());
    const tls = await app.request('/t/json', { headers: { 'X-Forwarded-Proto': 'https', 'X-Request-Id': 'edge-id_1=' } });
    expect(tls.headers.get('strict-transport-security')).toBe('max-age=63072000; includeSubDomains');
    expect(tls.headers.get('x-request-id')).toBe('edge-id_1=');
    const raw = await app.request('/t/raw', { headers: { 'X-Forwarded-Proto': 'https' } });
    expect(raw.headers.get('strict-transport-security')).toBe('max-age=1');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const res = await app.request('/t/json', { headers: { 'X-Request-Id': bad } });
      expect(res.headers.get('x-request-id')).not.toBe(bad);
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('refuses cross-site browser writes before anything else, with the envelope and the headers', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('external', deps, frontDoorProbeRoutes());
    const crossSite: Array<Record<string, string>> = [{ 'Sec-Fetch-Site': 'cross-site' }, { 'Sec-Fetch-Site': 'same-site' }, { Origin: 'https://evil.test', Host: 'panel.felis.test' }, { Origin: 'null', Host: 'panel.felis.test' }];
    for (const headers of crossSite) {
      const res = await app.request('/t/post', { method: 'POST', headers });
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('cross_site');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
    const same = await app.request('/t/post', { method: 'POST', headers: { Origin: 'https://panel.felis.test', Host: 'panel.felis.test', 'Sec-Fetch-Site': 'same-origin' } });
    expect(same.status).toBe(200);
    expect((await app.request('/t/json', { headers: { 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(200);
  });

  it('logs one request line and counts the request by route pattern', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, frontDoorProbeRoutes());
    const res = await app.request('/t/throw', { headers: { ...bearer('proxy'), 'X-Request-Id': 'line-1' } });
    expect(res.status).toBe(409);
    const lines = deps.captured.lines().filter((l) => l.msg === 'request');
    expect(lines).toEqual([expect.objectContaining({ face: 'internal', method: 'GET', route: '/t/throw', path: '/t/throw', status: 409, request_id: 'line-1', level: 'info' })]);
    await app.request('/t/crash');
    expect(deps.captured.lines().filter((l) => l.msg === 'request').at(-1)).toMatchObject({ status: 500, level: 'error' });
    const text = await deps.metrics.registry.metrics();
    expect(text).toContain('felis_http_requests_total{face="internal",method="GET",route="/t/throw",status="409"} 1');
  });

  it('identifies callers by token in constant time over every configured token', () => {
    const tokens = { proxy: 'p'.repeat(24), ops: 'o'.repeat(24) };
    expect(identifyCaller(tokens, 'p'.repeat(24))).toBe('proxy');
    expect(identifyCaller(tokens, 'o'.repeat(24))).toBe('ops');
    expect(identifyCaller(tokens, 'p'.repeat(23))).toBeUndefined();
    expect(identifyCaller(tokens, '')).toBeUndefined();
    expect(identifyCaller({}, 'p'.repeat(24))).toBeUndefined();
  });
});
