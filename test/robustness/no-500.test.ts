import { describe, expect, it } from 'vitest';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../src/http/env.js';
import { bearer, createTestApps, createTestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { createUser, signIn } from '../helpers/sessions.js';

/** Path parameter values a client may send by mistake or on purpose. */
const ODD_PARAMS = ['x', '..', '%2e%2e', 'A'.repeat(300), '%00', 'caf%C3%A9', "a'b", '00000000-0000-0000-0000-000000000000', '-1'];

/** Bodies that are not what any route wants. */
const ODD_BODIES: Array<[string, string]> = [
  ['malformed', '{"a":'],
  ['array', '[1,2,3]'],
  ['string', '"text"'],
  ['null', 'null'],
  ['wrong types', '{"email":1,"code":[],"name":{},"mc_uuid":true,"image_ref":null,"command":7,"enabled":"yes"}'],
  ['unknown field', '{"zzz":1}'],
  ['deep', '['.repeat(5000) + ']'.repeat(5000)],
];

function routesOf(app: OpenAPIHono<AppEnv>) {
  return app.routes
    .filter((r) => r.method !== 'ALL' && !r.path.startsWith('/openapi/'))
    .map((r) => ({ method: r.method.toUpperCase(), path: r.path }));
}

function fill(path: string, value: string): string {
  return path.replace(/:[\w-]+(\{[^}]*\})?/g, value);
}

/**
 * Every route of both faces, with the credentials that reach its handler, fed odd path values and
 * odd bodies: a client's mistake is never a 500.
 */
describe('no client mistake reaches a 500', () => {
  const database = useTestDatabase();

  it('holds for every route of both faces', async () => {
    const deps = createTestDeps(database());
    const { internal, external } = createTestApps(deps);
    const owner = await createUser(deps, { role: 'owner', email: 'sweep-owner@example.com', emailVerified: true });
    const staff = await signIn(deps, { userId: owner.id });
    const player = await createUser(deps, { role: 'user', email: 'sweep-player@example.com', emailVerified: true });
    const panel = await signIn(deps, { userId: player.id });
    const failures: string[] = [];
    const seen = new Map<number, number>();
    const check = async (face: string, app: OpenAPIHono<AppEnv>, method: string, url: string, init: RequestInit, what: string) => {
      const res = await app.request(url, { method, ...init });
      await res.arrayBuffer();
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 507) {
        failures.push(`${face} ${method} ${url.slice(0, 80)} (${what}) → ${res.status}`);
      }
    };
    const faces: Array<[string, OpenAPIHono<AppEnv>, Array<Record<string, string>>]> = [
      ['internal', internal, [bearer('proxy'), bearer('limbo'), bearer('build'), bearer('ops')]],
      ['external', external, [staff.headers, panel.headers]],
    ];
    for (const [face, app, credentials] of faces) {
      for (const route of routesOf(app)) {
        for (const headers of credentials) {
          for (const value of ODD_PARAMS) {
            await check(face, app, route.method, fill(route.path, value), { headers }, `param ${value.slice(0, 12)}`);
          }
          if (route.method === 'GET' || route.method === 'HEAD') continue;
          const url = fill(route.path, 'x');
          for (const [what, body] of ODD_BODIES) {
            await check(face, app, route.method, url, { headers: { ...headers, 'Content-Type': 'application/json' }, body }, what);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // The sweep reaches handlers, not only the gates in front of them.
    const total = [...seen.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(1000);
    for (const status of [200, 400, 403, 404]) expect(seen.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
  }, 240_000);
});
