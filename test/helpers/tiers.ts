import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { sessions } from '../../src/db/schema/accounts.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import { createTestApps, createTestDeps, jsonRequest, type TestDeps } from './app.js';
import { createUser, signIn } from './sessions.js';

export interface RouteCase {
  method: string;
  /** A function when the path needs ids made per test (e.g. a user to act on). */
  path: string | ((deps: TestDeps) => Promise<string> | string);
  body?: unknown;
}

const PANEL = 'panel.felis.test';
const CONSOLE = 'console.felis.test';
const AUTH_CODES = new Set(['unauthorized', 'forbidden', 'setup_required']);

async function call(deps: TestDeps, route: RouteCase, headers: Record<string, string>) {
  const { external } = createTestApps(deps);
  const path = typeof route.path === 'string' ? route.path : await route.path(deps);
  const init =
    route.body === undefined
      ? { method: route.method.toUpperCase(), headers }
      : jsonRequest(route.method.toUpperCase(), route.body, headers);
  const res = await external.request(path, init);
  const text = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return { status: res.status, code };
}

const label = (r: RouteCase) => `${r.method.toUpperCase()} ${typeof r.path === 'string' ? r.path : '(per test)'}`;

/**
 * The shared tier suite (STYLE habit 9): the same refusals, asked of every session route of a
 * tier. "Passes" means the answer is not one of the tier's refusals; the handler may still say
 * 400 or 404 about the request itself.
 */
export function describeTierMatrix(
  database: () => DatabaseHandle,
  tier: 'app' | 'admin',
  routes: Array<RouteCase & { setupAllowed?: boolean }>,
): void {
  describe(`${tier} tier matrix`, () => {
    for (const route of routes) {
      describe(label(route), () => {
        it('answers 401 without a cookie, with a forged one, expired, or revoked', async () => {
          const deps = createTestDeps(database());
          expect(await call(deps, route, { Host: PANEL })).toEqual({ status: 401, code: 'unauthorized' });
          expect(await call(deps, route, { Host: PANEL, Cookie: 'svc_session=forged' })).toEqual({ status: 401, code: 'unauthorized' });
          const user = await createUser(deps, { role: tier === 'admin' ? 'owner' : 'user' });
          const expired = await signIn(deps, { userId: user.id });
          const revoked = await signIn(deps, { userId: user.id });
          await deps.database.db.update(sessions).set({ revokedAt: deps.clock.now() }).where(eq(sessions.tokenHash, revoked.tokenHash));
          expect(await call(deps, route, revoked.headers)).toEqual({ status: 401, code: 'unauthorized' });
          deps.clock.advance(31 * 24 * 3600 * 1000);
          expect(await call(deps, route, expired.headers)).toEqual({ status: 401, code: 'unauthorized' });
        });

        it('refuses a player session on the console host with 403 forbidden', async () => {
          const deps = createTestDeps(database());
          const user = await createUser(deps);
          const s = await signIn(deps, { userId: user.id, host: CONSOLE });
          expect(await call(deps, route, s.headers)).toEqual({ status: 403, code: 'forbidden' });
        });

        it(tier === 'admin' ? 'refuses a player on the panel host with 403 forbidden' : 'serves a player on the panel host', async () => {
          const deps = createTestDeps(database());
          const user = await createUser(deps);
          const s = await signIn(deps, { userId: user.id, host: PANEL });
          const res = await call(deps, route, s.headers);
          if (tier === 'admin') expect(res).toEqual({ status: 403, code: 'forbidden' });
          else expect(AUTH_CODES.has(res.code ?? '')).toBe(false);
        });

        it(tier === 'admin' ? 'refuses staff on the panel host with 403 forbidden' : 'serves staff on the panel host', async () => {
          const deps = createTestDeps(database());
          const staff = await createUser(deps, { role: 'admin' });
          const s = await signIn(deps, { userId: staff.id, host: PANEL });
          const res = await call(deps, route, s.headers);
          if (tier === 'admin') expect(res).toEqual({ status: 403, code: 'forbidden' });
          else expect(AUTH_CODES.has(res.code ?? '')).toBe(false);
        });

        it('serves staff on the console host, and not once the session is idle 31 minutes', async () => {
          const deps = createTestDeps(database());
          const staff = await createUser(deps, { role: 'owner' });
          const s = await signIn(deps, { userId: staff.id, host: CONSOLE });
          const res = await call(deps, route, s.headers);
          expect(AUTH_CODES.has(res.code ?? ''), `${res.status} ${res.code}`).toBe(false);
          const idle = await signIn(deps, { userId: staff.id, host: CONSOLE });
          deps.clock.advance(31 * 60_000);
          expect(await call(deps, { ...route, path: route.path }, idle.headers)).toEqual({ status: 401, code: 'unauthorized' });
        });

        it(route.setupAllowed ? 'serves a session in setup lockdown' : 'answers 403 setup_required to a session in setup lockdown', async () => {
          const deps = createTestDeps(database());
          const owner = await createUser(deps, { role: 'owner', inSetup: true });
          const s = await signIn(deps, { userId: owner.id, host: CONSOLE, method: 'setup_token' });
          const res = await call(deps, route, s.headers);
          if (route.setupAllowed) expect(AUTH_CODES.has(res.code ?? ''), `${res.status} ${res.code}`).toBe(false);
          else expect(res).toEqual({ status: 403, code: 'setup_required' });
        });
      });
    }
  });
}

export interface BodyCase {
  method: string;
  path: string;
  /** Headers that get the request past authentication (and the host it needs). */
  headers?: (deps: TestDeps) => Promise<Record<string, string>>;
}

/** Bad bodies of a JSON route: each answers its status with the envelope, never a 500. */
export function describeBadBodies(database: () => DatabaseHandle, routes: BodyCase[]): void {
  describe('bad bodies', () => {
    for (const route of routes) {
      it(`${route.method} ${route.path}: 400 malformed / unknown field / wrong type, 415, 413`, async () => {
        const deps = createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-test-ip' } });
        const { external } = createTestApps(deps);
        // Each request from its own address, so the door limits never interfere.
        let n = 0;
        const send = async (body: string, contentType: string) => {
          const headers = { Host: 'panel.felis.test', ...(route.headers ? await route.headers(deps) : {}), 'Content-Type': contentType, 'x-test-ip': `198.51.100.${++n}` };
          const res = await external.request(route.path, { method: route.method, headers, body });
          const body2 = (await res.json()) as { error?: { code: string; request_id?: string } };
          return { status: res.status, code: body2.error?.code, hasId: typeof body2.error?.request_id === 'string' };
        };
        expect(await send('{"email": ', 'application/json')).toEqual({ status: 400, code: 'bad_request', hasId: true });
        expect(await send(JSON.stringify({ surprise: 1 }), 'application/json')).toEqual({ status: 400, code: 'bad_request', hasId: true });
        expect(await send('[]', 'application/json')).toEqual({ status: 400, code: 'bad_request', hasId: true });
        expect(await send('"x"', 'application/json')).toEqual({ status: 400, code: 'bad_request', hasId: true });
        expect(await send('email=a', 'application/x-www-form-urlencoded')).toEqual({ status: 415, code: 'unsupported_media_type', hasId: true });
        const big = `{"x":"${'a'.repeat(1024 * 1024)}"}`;
        expect(await send(big, 'application/json')).toEqual({ status: 413, code: 'too_large', hasId: true });
      });
    }
  });
}
