import { createServer, type Server } from 'node:http';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { linkedAccounts } from '../../db/schema/accounts.js';
import { settings } from '../../db/schema/settings.js';
import { parseUuid, thirdPartyUuid } from '../verifier/index.js';

const NATIVE = '123456781234423482341234567890ab';
const NATIVE_DASHED = parseUuid(NATIVE)!;

describe('the panel’s profile look-up and link through the configured sources', () => {
  const database = useTestDatabase();
  let upstream: Server;
  let root = '';
  let calls: string[] = [];
  let override: { status: number; body: string } | undefined;
  let deps: TestDeps;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      calls.push(`${req.method} ${req.url}`);
      res.setHeader('Content-Type', 'application/json');
      if (override) {
        res.statusCode = override.status;
        return res.end(override.body);
      }
      const profile = JSON.stringify({ id: NATIVE, name: 'LemonMiaow' });
      if (req.method === 'POST' && req.url === '/api/profiles/minecraft') {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          const names = JSON.parse(body) as string[];
          res.end(names[0]?.toLowerCase() === 'lemonmiaow' ? `[${profile}]` : '[]');
        });
        return;
      }
      if (req.url === `/sessionserver/session/minecraft/profile/${NATIVE}` || req.url === `/session/minecraft/profile/${NATIVE}` || req.url === '/users/profiles/minecraft/LemonMiaow') {
        return res.end(profile);
      }
      res.statusCode = 404;
      res.end('{}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    root = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  beforeEach(async () => {
    calls = [];
    override = undefined;
    deps = createTestDeps(database(), {
      env: {
        SESSION_SOURCES: JSON.stringify([
          { name: 'mojang', url: root, primary: true, profile_url: root },
          { name: 'littleskin', url: `${root}/sessionserver`, prefix: 'LS' },
          { name: 'custom', url: `${root}/custom`, prefix: 'CU' },
        ]),
      },
    });
    await deps.database.db.delete(settings).where(eq(settings.key, 'auth_sources'));
    await deps.database.db.delete(linkedAccounts);
  });

  const app = () => createTestApps(deps).external;
  const staff = async (options: { email?: string } = {}) => {
    const user = await createUser(deps, { role: 'admin', ...(options.email ? { email: options.email, emailVerified: true } : {}) });
    return { id: user.id, headers: (await signIn(deps, { userId: user.id })).headers };
  };
  const lookup = (headers: Record<string, string>, source: string, profile: string) =>
    app().request(`/api/v1/account/link/profile?${new URLSearchParams({ source, profile })}`, { headers });
  const link = (headers: Record<string, string>, body: unknown) => app().request('/api/v1/account/link/profile', jsonRequest('POST', body, headers));

  it('guards the routes: the tier matrix, and a player never reaches a look-up or a link', async () => {
    await expectTierMatrix(app(), [
      { method: 'GET', path: '/api/v1/account/link/sources', access: { tier: 'app' } },
      { method: 'GET', path: '/api/v1/account/link/profile?source=littleskin&profile=LemonMiaow', access: { tier: 'app' } },
      { method: 'POST', path: '/api/v1/account/link/profile', access: { tier: 'app' } },
    ]);
    const player = (await signIn(deps, { userId: (await createUser(deps)).id })).headers;
    for (const res of [await app().request('/api/v1/account/link/sources', { headers: player }), await lookup(player, 'littleskin', 'LemonMiaow'), await link(player, { source: 'littleskin', profile_uuid: NATIVE })]) {
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('forbidden');
    }
    expect(calls).toEqual([]);
  });

  it('lists the sources a login asks to staff, primary first, with whether each can look up a profile, and no URL', async () => {
    const { headers } = await staff();
    const res = await app().request('/api/v1/account/link/sources', { headers });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      sources: [
        { tag: 'mojang', lookup_available: true },
        { tag: 'littleskin', lookup_available: true },
        { tag: 'custom', lookup_available: false },
      ],
    });
    expect(text).not.toContain('127.0.0.1');
  });

  it('looks a player up by name or UUID with the UUID a login through that source gives, and links nothing', async () => {
    const { headers } = await staff();
    const byName = await lookup(headers, 'littleskin', ' LemonMiaow ');
    expect(byName.status).toBe(200);
    const third = { source: 'littleskin', name: 'LemonMiaow', profile_uuid: NATIVE, mc_uuid: thirdPartyUuid('littleskin', NATIVE), auth_source: 'thirdparty' };
    expect(await byName.json()).toEqual(third);
    expect(calls).toContain('POST /api/profiles/minecraft');
    expect(await (await lookup(headers, 'littleskin', NATIVE_DASHED)).json()).toEqual(third);
    const primary = await lookup(headers, 'mojang', NATIVE);
    expect(await primary.json()).toEqual({ source: 'mojang', name: 'LemonMiaow', profile_uuid: NATIVE, mc_uuid: NATIVE_DASHED, auth_source: 'primary' });
    expect(await (await lookup(headers, 'mojang', 'LemonMiaow')).json()).toMatchObject({ mc_uuid: NATIVE_DASHED });
    // `name` is taken as an alias of the panel's `profile`.
    expect((await app().request('/api/v1/account/link/profile?source=littleskin&name=LemonMiaow', { headers })).status).toBe(200);
    expect(await deps.database.db.select().from(linkedAccounts)).toEqual([]);
  });

  it('refuses bad input, unknown and unsupported sources (400), a player the source lacks (404), unusable answers (503)', async () => {
    const { headers } = await staff();
    const expectCode = async (res: Response, status: number, code: string) => {
      expect(res.status, code).toBe(status);
      expect((await errorOf(res)).code).toBe(code);
    };
    await expectCode(await lookup(headers, 'littleskin', 'not a name!'), 400, 'bad_request');
    const before = calls.length;
    await expectCode(await lookup(headers, 'nowhere', 'LemonMiaow'), 400, 'auth_source_unknown');
    await expectCode(await lookup(headers, 'custom', 'LemonMiaow'), 400, 'auth_source_lookup_unsupported');
    expect(calls.length).toBe(before);
    await expectCode(await lookup(headers, 'littleskin', 'Nobody'), 404, 'minecraft_profile_not_found');
    await expectCode(await lookup(headers, 'littleskin', randomMcUuid()), 404, 'minecraft_profile_not_found');
    for (const [status, body] of [
      [503, ''],
      [200, 'broken'],
      [200, JSON.stringify({ id: '223456781234423482341234567890ab', name: 'LemonMiaow' })],
      [200, JSON.stringify({ id: NATIVE, name: 'invalid name' })],
      [302, ''],
    ] as const) {
      override = { status, body };
      await expectCode(await lookup(headers, 'littleskin', NATIVE), 503, 'auth_source_unavailable');
    }
    override = undefined;
    expect((await app().request('/api/v1/account/link/profile?source=littleskin', { headers })).status).toBe(400);
    expect((await app().request('/api/v1/account/link/profile?source=littleskin&profile=a&name=b', { headers })).status).toBe(400);
    expect((await app().request('/api/v1/account/link/profile?source=littleskin&profile=LemonMiaow&x=1', { headers })).status).toBe(400);
  });

  it('links the player to my own account: idempotent, 409 when another account holds it, the account never chosen by the caller, reauth guarded', async () => {
    const me = await staff({ email: `s${randomMcUuid().slice(0, 6)}@example.com` });
    const body = { source: 'littleskin', profile_uuid: NATIVE };
    const res = await link(me.headers, body);
    expect(res.status).toBe(200);
    const canonical = thirdPartyUuid('littleskin', NATIVE);
    expect(await res.json()).toEqual({ linked: true, mc_uuid: canonical, auth_source: 'thirdparty' });
    expect((await link(me.headers, body)).status).toBe(200);
    const rows = await deps.database.db.select().from(linkedAccounts).where(eq(linkedAccounts.mcUuid, canonical));
    expect(rows).toMatchObject([{ userId: me.id, authSource: 'thirdparty' }]);
    expect((await link(me.headers, { ...body, user_id: randomMcUuid() })).status).toBe(400);
    expect((await link(me.headers, { source: 'littleskin', profile_uuid: 'LemonMiaow' })).status).toBe(400);

    const other = await staff();
    await linkAccount(deps, { userId: other.id, mcUuid: NATIVE_DASHED });
    const taken = await link(me.headers, { source: 'mojang', profile_uuid: NATIVE });
    expect(taken.status).toBe(409);
    expect((await errorOf(taken)).code).toBe('already_linked');

    deps.clock.advance(6 * 60_000);
    const stale = await link(me.headers, body);
    expect(stale.status).toBe(403);
    expect((await errorOf(stale)).code).toBe('reauth_required');
  });
});
