import { expect } from 'vitest';
import { CALLERS, type Caller } from '../../src/config.js';
import type { Access } from '../../src/http/tiers.js';
import { TOKENS } from './app.js';

/** Anything with Hono's `request()`: an app built by createTestApps or createTestApp. */
export interface RequestTarget {
  request(input: string, init?: RequestInit): Response | Promise<Response>;
}

/** One operation as a feature's route table lists it: a concrete path (parameters filled in). */
export interface TierRoute {
  method: string;
  path: string;
  access: Access;
}

interface Envelope {
  error: { code: string; message: string; request_id?: string };
}

async function expectEnvelope(res: Response, status: number, code: string | undefined, label: string): Promise<void> {
  expect(res.status, label).toBe(status);
  const body = (await res.json()) as Envelope;
  if (code !== undefined) expect(body.error.code, label).toBe(code);
  expect(typeof body.error.message, label).toBe('string');
  expect(body.error.request_id, label).toBe(res.headers.get('x-request-id'));
}

function send(app: RequestTarget, route: TierRoute, headers: Record<string, string>): Promise<Response> {
  return Promise.resolve(app.request(route.path, { method: route.method, headers }));
}

/**
 * The shared tier suite (STYLE habit 9): for every route in a feature's table it checks that the
 * declared access is what the face enforces, before any body or handler runs.
 *
 * - service: no token, a malformed header, an unknown token and a token sent as another scheme are
 *   401 `unauthorized`; each genuine token of an unlisted caller is 403 `wrong_caller`; each listed
 *   caller gets past authentication (neither 401 nor 403 `wrong_caller`).
 * - app / admin: no cookie is 401, and a genuine service token is no credential there.
 * - public: no credential is needed (never 401).
 *
 * Requests carry no body and no Origin, so authentication is the first rule that can refuse them.
 */
export async function expectTierMatrix(app: RequestTarget, routes: readonly TierRoute[]): Promise<void> {
  for (const route of routes) {
    const label = (what: string) => `${route.method} ${route.path}: ${what}`;
    const { access } = route;
    if (access.tier === 'service') {
      const listed = new Set<Caller>(access.callers);
      const unauthenticated: Array<[string, Record<string, string>]> = [
        ['no token', {}],
        ['empty bearer', { Authorization: 'Bearer ' }],
        ['unknown token', { Authorization: 'Bearer not-a-configured-token' }],
        ['token in another scheme', { Authorization: `Basic ${TOKENS.proxy}` }],
        ['token without scheme', { Authorization: TOKENS.proxy }],
        ['token with a suffix', { Authorization: `Bearer ${TOKENS.proxy}x` }],
      ];
      for (const [what, headers] of unauthenticated) {
        await expectEnvelope(await send(app, route, headers), 401, 'unauthorized', label(what));
      }
      for (const caller of CALLERS) {
        const res = await send(app, route, { Authorization: `Bearer ${TOKENS[caller]}` });
        if (listed.has(caller)) {
          expect(res.status, label(`listed caller ${caller}`)).not.toBe(401);
          if (res.status === 403) {
            expect(((await res.json()) as Envelope).error.code, label(`listed caller ${caller}`)).not.toBe('wrong_caller');
          }
        } else {
          await expectEnvelope(res, 403, 'wrong_caller', label(`unlisted caller ${caller}`));
        }
      }
    } else if (access.tier === 'app' || access.tier === 'admin') {
      await expectEnvelope(await send(app, route, {}), 401, 'unauthorized', label('no session'));
      for (const caller of CALLERS) {
        const res = await send(app, route, { Authorization: `Bearer ${TOKENS[caller]}` });
        await expectEnvelope(res, 401, 'unauthorized', label(`service token of ${caller} instead of a session`));
      }
    } else {
      const res = await send(app, route, {});
      expect(res.status, label('public route without credential')).not.toBe(401);
    }
  }
}
