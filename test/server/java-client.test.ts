import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../src/service.js';
import { serve, type Listening } from '../../src/runtime/serve.js';
import { TOKENS, createTestApp, createTestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { fixtureRoutes } from '../helpers/fixture-routes.js';
import { RawConnection, javaClientRequest } from '../helpers/raw-http.js';
import { startTestService } from '../helpers/service.js';
import { SERVICE_VERSION } from '../../src/version.js';

describe("the proxy's Java client on the internal face", () => {
  const database = useTestDatabase();
  let service: RunningService;
  let fixture: Listening;

  beforeAll(async () => {
    service = await startTestService();
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, fixtureRoutes());
    fixture = await serve({ fetch: app.fetch, port: 0, host: '127.0.0.1', log: deps.log });
  });
  afterAll(async () => {
    await fixture?.close(100);
    await service?.stop();
  });

  it('gets plain HTTP/1.1 answers to its h2c-offering requests, several on one connection', async () => {
    const port = service.internal.port;
    const conn = await RawConnection.open(port);
    try {
      for (const path of ['/healthz', '/readyz']) {
        await conn.write(javaClientRequest({ method: 'GET', path, port, token: TOKENS.proxy }));
        const res = await conn.readResponse();
        expect(res.statusLine).toBe('HTTP/1.1 200 OK');
        expect(res.headers.upgrade).toBeUndefined();
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.headers['x-request-id']).toBeTruthy();
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(JSON.parse(res.body)).toEqual(path === '/healthz' ? { status: 'ok', version: SERVICE_VERSION } : { status: 'ready' });
      }
      await conn.write(javaClientRequest({ method: 'GET', path: '/metrics', port, token: TOKENS.proxy }));
      const metrics = await conn.readResponse();
      expect(metrics.status).toBe(200);
      expect(metrics.body).toContain('felis_http_requests_total{face="internal",method="GET",route="/healthz",status="200"} 1');
      expect(conn.closed).toBe(false);
    } finally {
      conn.close();
    }
  });

  it('reads the error envelope for an unknown path', async () => {
    const port = service.internal.port;
    const conn = await RawConnection.open(port);
    try {
      await conn.write(javaClientRequest({ method: 'GET', path: '/api/v1/servers/nope', port, token: TOKENS.proxy }));
      const res = await conn.readResponse();
      expect(res.statusLine).toBe('HTTP/1.1 404 Not Found');
      const body = JSON.parse(res.body) as { error: { code: string; request_id: string } };
      expect(body.error.code).toBe('not_found');
      expect(body.error.request_id).toBe(res.headers['x-request-id']);
    } finally {
      conn.close();
    }
  });

  it('is served on a service route: its GET with Content-Length 0 is not a body, its POST body is JSON', async () => {
    const port = fixture.port;
    const conn = await RawConnection.open(port);
    try {
      await conn.write(javaClientRequest({ method: 'GET', path: '/api/v1/fixture/items/a1', port, token: TOKENS.proxy }));
      const get = await conn.readResponse();
      expect(get.statusLine).toBe('HTTP/1.1 200 OK');
      expect(JSON.parse(get.body)).toEqual({ id: 'a1' });

      const body = JSON.stringify({ name: 'lobby', count: 2 });
      await conn.write(javaClientRequest({ method: 'POST', path: '/api/v1/fixture/echo', port, token: TOKENS.proxy, body }));
      const post = await conn.readResponse();
      expect(post.statusLine).toBe('HTTP/1.1 200 OK');
      expect(JSON.parse(post.body)).toEqual({ name: 'lobby', count: 2, caller: 'proxy' });

      await conn.write(javaClientRequest({ method: 'POST', path: '/api/v1/fixture/ip', port, token: TOKENS.proxy, body: '{}' }));
      const ip = await conn.readResponse();
      expect(JSON.parse(ip.body)).toEqual({ ip: '127.0.0.1' });

      await conn.write(javaClientRequest({ method: 'POST', path: '/api/v1/fixture/echo', port, token: TOKENS.limbo, body }));
      const wrong = await conn.readResponse();
      expect(wrong.status).toBe(403);
      expect((JSON.parse(wrong.body) as { error: { code: string } }).error.code).toBe('wrong_caller');
    } finally {
      conn.close();
    }
  });
});
