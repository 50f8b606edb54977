import { describe, expect, it, vi } from 'vitest';
import { CALLERS } from '../../src/config.js';
import { identifyCaller } from '../../src/http/service-auth.js';
import * as secrets from '../../src/lib/secrets.js';
import { TOKENS, bearer, createTestApp, createTestApps, createTestDeps, errorOf, jsonRequest } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { ECHO_PATH, FIXTURE_ROUTES, fixtureRoutes } from '../helpers/fixture-routes.js';
import { expectTierMatrix } from '../helpers/tier-matrix.js';

const body = { name: 'a', count: 1 };

describe('cross-site guard and service-token auth', () => {
  const database = useTestDatabase();
  const app = (env?: Record<string, string | undefined>) =>
    createTestApp('internal', createTestDeps(database(), { env }), fixtureRoutes());

  describe('cross-site guard', () => {
    it('refuses unsafe requests a browser sends from another site with 403 cross_site', async () => {
      const cases: Array<Record<string, string>> = [
        { 'Sec-Fetch-Site': 'cross-site' },
        { 'Sec-Fetch-Site': 'same-site' },
        { 'Sec-Fetch-Site': 'Same-Site' },
        { Origin: 'https://evil.example' },
        { Origin: 'http://localhost:9999' },
        { Origin: 'null' },
        { Origin: 'file://' },
        { Origin: 'https://panel.felis.test' },
      ];
      for (const headers of cases) {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
          const res = await app().request(ECHO_PATH, jsonRequest(method, body, { ...bearer('proxy'), ...headers }));
          expect(res.status, `${method} ${JSON.stringify(headers)}`).toBe(403);
          const error = await errorOf(res);
          expect(error.code).toBe('cross_site');
          expect(error.request_id).toBe(res.headers.get('x-request-id'));
        }
      }
    });

    it('checks before authentication: without any token the answer is still cross_site', async () => {
      for (const headers of [{ 'Sec-Fetch-Site': 'cross-site' }, { Origin: 'null' }] as Array<Record<string, string>>) {
        const res = await app().request(ECHO_PATH, jsonRequest('POST', 'not even json', headers));
        expect(res.status).toBe(403);
        expect((await errorOf(res)).code).toBe('cross_site');
      }
    });

    it('checks before routing: an unsafe cross-site request to an unknown path is refused too', async () => {
      const res = await app().request('/api/v1/unknown', { method: 'DELETE', headers: { 'Sec-Fetch-Site': 'cross-site' } });
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('cross_site');
    });

    it('lets same-origin, user-initiated and header-less callers through', async () => {
      const cases: Array<Record<string, string>> = [
        {},
        { 'Sec-Fetch-Site': 'same-origin' },
        { 'Sec-Fetch-Site': 'none' },
        { Origin: 'http://localhost' },
        { Origin: 'https://api.felis.test', Host: 'api.felis.test' },
        { Origin: 'https://API.felis.test', Host: 'api.felis.test', 'Sec-Fetch-Site': 'same-origin' },
        { Origin: 'http://api.felis.test:8081', Host: 'api.felis.test:8081' },
      ];
      for (const headers of cases) {
        const res = await app().request(ECHO_PATH, jsonRequest('POST', body, { ...bearer('proxy'), ...headers }));
        expect(res.status, JSON.stringify(headers)).toBe(200);
      }
    });

    it('leaves safe methods alone even from another site', async () => {
      const res = await app().request('/api/v1/fixture/items/a1', {
        headers: { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' },
      });
      expect(res.status).toBe(200);
    });
  });

  describe('service tokens', () => {
    it('answers 401 without a token, with a malformed header and with an unknown token', async () => {
      const headers: Array<Record<string, string>> = [
        {},
        { Authorization: '' },
        { Authorization: 'Bearer' },
        { Authorization: 'Bearer ' },
        { Authorization: `Bearer ${TOKENS.proxy} extra` },
        { Authorization: `Token ${TOKENS.proxy}` },
        { Authorization: 'Bearer wrong-token' },
        { Authorization: `Bearer ${TOKENS.proxy.slice(0, -1)}` },
        { Authorization: `Bearer ${TOKENS.proxy.toUpperCase()}` },
      ];
      for (const h of headers) {
        const res = await app().request(ECHO_PATH, jsonRequest('POST', body, h));
        expect(res.status, JSON.stringify(h)).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
        const error = await errorOf(res);
        expect(error.code).toBe('unauthorized');
        expect(error.request_id).toBe(res.headers.get('x-request-id'));
      }
    });

    it('answers 403 wrong_caller to a genuine token of a caller the route does not list', async () => {
      for (const caller of ['limbo', 'build', 'ops'] as const) {
        const res = await app().request(ECHO_PATH, jsonRequest('POST', body, bearer(caller)));
        expect(res.status, caller).toBe(403);
        expect((await errorOf(res)).code).toBe('wrong_caller');
      }
    });

    it('serves the listed caller, with the scheme in any case', async () => {
      const res = await app().request(ECHO_PATH, jsonRequest('POST', body, { Authorization: `bearer ${TOKENS.proxy}` }));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { caller: string }).caller).toBe('proxy');
    });

    it('never authenticates a caller whose token is not configured', async () => {
      const unconfigured = app({ SERVICE_TOKEN_PROXY: undefined, SERVICE_TOKEN_LIMBO: '' });
      for (const token of ['', 'undefined', TOKENS.proxy, TOKENS.limbo]) {
        const res = await unconfigured.request(ECHO_PATH, jsonRequest('POST', body, { Authorization: `Bearer ${token}` }));
        expect(res.status, token).toBe(401);
      }
      const limboRoute = await unconfigured.request('/api/v1/fixture/items/a1', jsonRequest('PUT', { label: 'x' }, bearer('limbo')));
      expect(limboRoute.status).toBe(401);
      const opsRoute = await unconfigured.request('/api/v1/fixture/items/a1', jsonRequest('PUT', { label: 'x' }, bearer('ops')));
      expect(opsRoute.status).toBe(200);
    });

    it('passes the shared tier matrix for the fixture routes', async () => {
      await expectTierMatrix(app(), FIXTURE_ROUTES);
    });

    it('passes the tier matrix for the probes of both real faces', async () => {
      const { internal, external } = createTestApps(createTestDeps(database()));
      const probes = ['/healthz', '/readyz', '/metrics', '/openapi/internal.json', '/openapi/external.json'];
      await expectTierMatrix(internal, probes.map((path) => ({ method: 'GET', path, access: { tier: 'public' } }) as const));
      await expectTierMatrix(external, [{ method: 'GET', path: '/healthz', access: { tier: 'public' } }]);
    });

    it('has a tier matrix that fails a route whose declared callers are not enforced', async () => {
      const wrongTable = [{ method: 'POST', path: ECHO_PATH, access: { tier: 'service', callers: ['proxy', 'limbo'] } }] as const;
      await expect(expectTierMatrix(app(), wrongTable)).rejects.toThrow(/listed caller limbo/);
      const publicClaimed = [{ method: 'POST', path: ECHO_PATH, access: { tier: 'public' } }] as const;
      await expect(expectTierMatrix(app(), publicClaimed)).rejects.toThrow(/public route/);
    });
  });

  describe('identifyCaller', () => {
    const tokens = { proxy: 'p-token-aaaaaaaa', limbo: 'l-token-bbbbbbbb', ops: 'o-token-cccccccc' };

    it('names the caller holding the token, and nobody for anything else', () => {
      expect(identifyCaller(tokens, 'p-token-aaaaaaaa')).toBe('proxy');
      expect(identifyCaller(tokens, 'l-token-bbbbbbbb')).toBe('limbo');
      expect(identifyCaller(tokens, 'o-token-cccccccc')).toBe('ops');
      for (const other of ['', 'p-token-aaaaaaa', 'p-token-aaaaaaaab', 'P-TOKEN-AAAAAAAA', 'undefined']) {
        expect(identifyCaller(tokens, other), other).toBeUndefined();
      }
    });

    it('never matches an unconfigured caller, even with an empty token', () => {
      expect(identifyCaller({}, '')).toBeUndefined();
      expect(identifyCaller({ build: undefined }, '')).toBeUndefined();
    });

    it('compares with the constant-time helper against every configured token, whatever matches first', () => {
      const spy = vi.spyOn(secrets, 'tokensEqual');
      try {
        identifyCaller(tokens, 'p-token-aaaaaaaa');
        expect(spy).toHaveBeenCalledTimes(3);
        spy.mockClear();
        identifyCaller(tokens, 'no-match');
        expect(spy.mock.calls.map((call) => call[1]).sort()).toEqual(Object.values(tokens).sort());
        expect(spy.mock.calls.every((call) => call[0] === 'no-match')).toBe(true);
      } finally {
        spy.mockRestore();
      }
    });

    it('is exhaustive over the four callers', () => {
      const all = Object.fromEntries(CALLERS.map((c) => [c, `${c}-secret-0000`]));
      for (const caller of CALLERS) expect(identifyCaller(all, `${caller}-secret-0000`)).toBe(caller);
    });
  });
});
