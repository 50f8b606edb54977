import { describe, expect, it } from 'vitest';
import { bearer, createTestApp, createTestApps, createTestDeps, errorOf, jsonRequest } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { BOOM_DETAIL, BOOM_PATH, CONTRACT_HEADERS, ECHO_PATH, fixtureRoutes } from '../helpers/fixture-routes.js';

function expectSecurityHeaders(res: Response): void {
  for (const [name, value] of Object.entries(CONTRACT_HEADERS)) expect(res.headers.get(name), name).toBe(value);
}

describe('error envelope, request id and security headers', () => {
  const database = useTestDatabase();
  const setup = () => {
    const deps = createTestDeps(database());
    return { deps, app: createTestApp('internal', deps, fixtureRoutes()) };
  };

  describe('404 and 405', () => {
    it('answers 404 not_found with the envelope for a path no operation serves, on both faces', async () => {
      const { internal, external } = createTestApps(createTestDeps(database()));
      for (const app of [internal, external]) {
        const res = await app.request('/api/v1/nothing/here');
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const error = await errorOf(res);
        expect(error.code).toBe('not_found');
        expect(error.request_id).toBe(res.headers.get('x-request-id'));
        expect(res.headers.get('allow')).toBeNull();
      }
    });

    it('answers 405 method_not_allowed with Allow listing every method of the path', async () => {
      const { app } = setup();
      const res = await app.request('/api/v1/fixture/items/a1', { method: 'DELETE' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, PUT');
      const error = await errorOf(res);
      expect(error.code).toBe('method_not_allowed');
      expect(error.request_id).toBe(res.headers.get('x-request-id'));
    });

    it('answers 405 for a POST-only path asked with GET, and 405 on the real faces too', async () => {
      const { app } = setup();
      const res = await app.request(ECHO_PATH);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      const { internal, external } = createTestApps(createTestDeps(database()));
      for (const face of [internal, external]) {
        const probe = await face.request('/healthz', { method: 'POST' });
        expect(probe.status).toBe(405);
        expect(probe.headers.get('allow')).toBe('GET, HEAD');
        expect((await errorOf(probe)).code).toBe('method_not_allowed');
      }
    });

    it('answers 404, not 405, for a served path with a trailing slash or an extra segment', async () => {
      const { app } = setup();
      for (const path of ['/api/v1/fixture/echo/', '/api/v1/fixture/items/a1/more', '/api/v1/fixture/items/']) {
        const res = await app.request(path, { method: 'POST' });
        expect(res.status, path).toBe(404);
        expect((await errorOf(res)).code, path).toBe('not_found');
      }
    });
  });

  describe('500', () => {
    it('answers 500 internal without the detail, and logs the detail under the request id', async () => {
      const { app, deps } = setup();
      const res = await app.request(BOOM_PATH, { headers: { 'X-Request-Id': 'trace-500-abc' } });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(text).not.toContain('fixture secret detail');
      expect(text).not.toContain('postgres://');
      const error = (JSON.parse(text) as { error: { code: string; request_id: string } }).error;
      expect(error.code).toBe('internal');
      expect(error.request_id).toBe('trace-500-abc');
      expectSecurityHeaders(res);
      const logged = deps.captured.lines().find((l) => l.msg === 'unexpected error');
      expect(logged).toBeDefined();
      expect(logged!.request_id).toBe('trace-500-abc');
      expect(logged!.level).toBe('error');
      expect((logged!.err as { message: string }).message).toBe(BOOM_DETAIL);
    });
  });

  describe('X-Request-Id', () => {
    it('keeps a well-formed inbound id on success and on errors', async () => {
      const { app } = setup();
      const id = 'Abc-123_xyz=';
      for (const res of [
        await app.request('/healthz-missing', { headers: { 'X-Request-Id': id } }),
        await app.request('/api/v1/fixture/items/a1', { headers: { 'X-Request-Id': id } }),
      ]) {
        expect(res.headers.get('x-request-id')).toBe(id);
      }
      const error = await errorOf(await app.request('/nope', { headers: { 'X-Request-Id': id } }));
      expect(error.request_id).toBe(id);
    });

    it('keeps an id of exactly 128 characters', async () => {
      const { app } = setup();
      const id = 'a'.repeat(128);
      expect((await app.request('/api/v1/fixture/items/a1', { headers: { 'X-Request-Id': id } })).headers.get('x-request-id')).toBe(id);
    });

    it('replaces an inbound id that is too long, empty or has other characters', async () => {
      const { app } = setup();
      for (const bad of ['a'.repeat(129), 'has space', 'semi;colon', '<script>', 'dots.are.out', 'ünicode', '']) {
        const res = await app.request('/nope', { headers: { 'X-Request-Id': bad } });
        const got = res.headers.get('x-request-id');
        expect(got, JSON.stringify(bad)).not.toBe(bad);
        expect(got).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect((await errorOf(res)).request_id).toBe(got);
      }
    });

    it('gives every response an id, each one different when none is sent', async () => {
      const { app } = setup();
      const ids = new Set<string | null>();
      for (let i = 0; i < 5; i++) ids.add((await app.request('/api/v1/fixture/items/a1')).headers.get('x-request-id'));
      expect(ids.size).toBe(5);
      expect(ids.has(null)).toBe(false);
    });
  });

  describe('security headers', () => {
    it('sets the exact contract values on success, 4xx, 404, 405 and 500', async () => {
      const { app } = setup();
      const responses = [
        await app.request('/api/v1/fixture/items/a1'),
        await app.request(ECHO_PATH, jsonRequest('POST', { name: 'x', count: 1 }, bearer('proxy'))),
        await app.request(ECHO_PATH, jsonRequest('POST', { name: 'x', count: 1 })),
        await app.request('/nope'),
        await app.request(ECHO_PATH),
        await app.request(BOOM_PATH),
      ];
      expect(responses.map((r) => r.status)).toEqual([200, 200, 401, 404, 405, 500]);
      for (const res of responses) {
        expectSecurityHeaders(res);
        expect(res.headers.get('strict-transport-security')).toBeNull();
      }
    });

    it('adds HSTS only when the request came through the TLS edge', async () => {
      const { app } = setup();
      const viaTls = await app.request('/nope', { headers: { 'X-Forwarded-Proto': 'https' } });
      expect(viaTls.headers.get('strict-transport-security')).toMatch(/^max-age=\d{7,}/);
      expectSecurityHeaders(viaTls);
      const okViaTls = await app.request('/api/v1/fixture/items/a1', { headers: { 'X-Forwarded-Proto': 'HTTPS' } });
      expect(okViaTls.headers.get('strict-transport-security')).toMatch(/^max-age=\d{7,}/);
      for (const proto of [undefined, 'http', 'https-not', 'http, https']) {
        const res = await app.request('/api/v1/fixture/items/a1', {
          headers: proto === undefined ? {} : { 'X-Forwarded-Proto': proto },
        });
        expect(res.headers.get('strict-transport-security'), String(proto)).toBeNull();
      }
    });

    it('sets them on both real faces', async () => {
      const { internal, external } = createTestApps(createTestDeps(database()));
      for (const app of [internal, external]) {
        const res = await app.request('/healthz');
        expect(res.status).toBe(200);
        expectSecurityHeaders(res);
      }
    });
  });
});
