import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { linkedAccounts, sessions, users } from '../../db/schema/accounts.js';
import { linkCodes } from '../../db/schema/linking.js';
import { sha256Hex } from '../../lib/secrets.js';
import { CODE_ALPHABET, generateLinkCode, linkCodeHash, normalizeLinkCode } from './codes.js';
import { purgeIdentityCodes } from './housekeeping.js';

const PANEL = { Host: 'panel.felis.test' };
/** A name-based (version 3) UUID: a third-party player's namespaced id. */
const v3Uuid = () => randomMcUuid().replace(/^(.{14})4/, '$13');

async function mintCode(deps: TestDeps, mcUuid: string, body: Record<string, unknown> = {}, caller: 'proxy' | 'limbo' = 'limbo') {
  const { internal } = createTestApps(deps);
  const res = await internal.request('/api/v1/internal/account/link/code', jsonRequest('POST', { mc_uuid: mcUuid, ...body }, bearer(caller)));
  expect(res.status).toBe(201);
  return (await res.json()) as { code: string; expires_at: string; panel_url?: string };
}

async function linkStatus(deps: TestDeps, mcUuid: string): Promise<boolean> {
  const { internal } = createTestApps(deps);
  const res = await internal.request(`/api/v1/internal/account/link/status/${mcUuid}`, { headers: bearer('proxy') });
  expect(res.status).toBe(200);
  return ((await res.json()) as { linked: boolean }).linked;
}

const bind = (deps: TestDeps, code: string, headers: Record<string, string> = PANEL) =>
  createTestApps(deps).external.request('/api/v1/auth/bind', jsonRequest('POST', { code }, headers));

describe('codes', () => {
  it('are 8 characters of the unambiguous alphabet, every character reachable', () => {
    let seed = 0;
    const random = { bytes: (n: number) => Uint8Array.from({ length: n }, () => (seed = (seed * 73 + 41) % 256)) };
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const code = generateLinkCode(random);
      expect(code).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8}$/);
      for (const ch of code) seen.add(ch);
    }
    expect(seen.size).toBe(CODE_ALPHABET.length);
    expect(CODE_ALPHABET).not.toMatch(/[01ILO]/);
  });

  it('are typed back trimmed and in any case; anything else is not a code', () => {
    expect(normalizeLinkCode('  k7qx4m2p ')).toBe('K7QX4M2P');
    expect(normalizeLinkCode('K7QX4M2')).toBeUndefined();
    expect(normalizeLinkCode('K7QX4M2O')).toBeUndefined();
    expect(normalizeLinkCode("K7QX4M2'")).toBeUndefined();
  });
});

describe('internal link code and link status', () => {
  const database = useTestDatabase();

  it('mints a code stored only as its hash, 10 minutes, with panel_url of the panel host', async () => {
    const deps = createTestDeps(database());
    const mcUuid = randomMcUuid();
    const minted = await mintCode(deps, mcUuid, {}, 'proxy');
    expect(minted.code).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
    expect(minted.expires_at).toBe(new Date(deps.clock.now().getTime() + 600_000).toISOString());
    expect(minted.panel_url).toBe('https://panel.felis.test/');
    const rows = await deps.database.db.select().from(linkCodes).where(eq(linkCodes.mcUuid, mcUuid));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.codeHash).toBe(linkCodeHash(minted.code));
    expect(JSON.stringify(rows)).not.toContain(minted.code);
  });

  it('leaves panel_url out when no panel host is configured', async () => {
    const deps = createTestDeps(database(), { env: { PANEL_HOST: '' } });
    const minted = await mintCode(deps, randomMcUuid());
    expect(minted).not.toHaveProperty('panel_url');
  });

  it('derives auth_source from the UUID version when omitted, and copies it onto the durable link', async () => {
    const deps = createTestDeps(database());
    for (const [mcUuid, body, expected] of [
      [v3Uuid(), {}, 'thirdparty'],
      [randomMcUuid(), {}, 'primary'],
      [randomMcUuid().replace(/^(.{14})4/, '$11'), {}, 'primary'],
      [randomMcUuid(), { auth_source: 'thirdparty' }, 'thirdparty'],
    ] as const) {
      const minted = await mintCode(deps, mcUuid, body);
      const res = await bind(deps, minted.code);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ mc_uuid: mcUuid, auth_source: expected });
      const [link] = await deps.database.db.select().from(linkedAccounts).where(eq(linkedAccounts.mcUuid, mcUuid));
      expect(link!.authSource).toBe(expected);
    }
  });

  it('link status is read-only: unknown and unlinked read false, polling spends nothing', async () => {
    const deps = createTestDeps(database());
    const mcUuid = randomMcUuid();
    expect(await linkStatus(deps, mcUuid)).toBe(false);
    const minted = await mintCode(deps, mcUuid);
    for (let i = 0; i < 3; i++) expect(await linkStatus(deps, mcUuid)).toBe(false);
    expect((await bind(deps, minted.code)).status).toBe(200);
    expect(await linkStatus(deps, mcUuid)).toBe(true);
    expect(await linkStatus(deps, mcUuid.replaceAll('-', '').toUpperCase())).toBe(true);

    const deleted = await createUser(deps);
    const orphan = randomMcUuid();
    await linkAccount(deps, { userId: deleted.id, mcUuid: orphan });
    await deps.database.db.update(users).set({ deletedAt: deps.clock.now() }).where(eq(users.id, deleted.id));
    expect(await linkStatus(deps, orphan)).toBe(false);
  });

  it('answers 400 for a malformed UUID or auth_source, never 500', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    for (const body of [{ mc_uuid: 'nope' }, { mc_uuid: randomMcUuid(), auth_source: 'mojang' }, { mc_uuid: 7 }, {}]) {
      const res = await internal.request('/api/v1/internal/account/link/code', jsonRequest('POST', body, bearer('proxy')));
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    const res = await internal.request('/api/v1/internal/account/link/status/not-a-uuid', { headers: bearer('limbo') });
    expect(res.status).toBe(400);
  });

  it('serves the proxy and the lobby only', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const access = { tier: 'service', callers: ['proxy', 'limbo'] } as const;
    await expectTierMatrix(internal, [
      { method: 'POST', path: '/api/v1/internal/account/link/code', access },
      { method: 'GET', path: `/api/v1/internal/account/link/status/${randomMcUuid()}`, access },
    ]);
  });
});

describe('the bind-code sign-in', () => {
  const database = useTestDatabase();

  it('creates the player account, links it and signs it in with method bind; a later code finds the same account', async () => {
    const deps = createTestDeps(database());
    const mcUuid = randomMcUuid();
    const res = await bind(deps, ` ${(await mintCode(deps, mcUuid)).code.toLowerCase()} `);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { user_id: string };
    expect(body).toEqual({ user_id: expect.any(String), linked: true, mc_uuid: mcUuid, auth_source: 'primary' });
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^svc_session=[^;]+;.*HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/SameSite=Lax/);
    const token = cookie.split(';')[0]!.split('=')[1]!;
    const [session] = await deps.database.db.select().from(sessions).where(eq(sessions.tokenHash, sha256Hex(token)));
    expect(session).toMatchObject({ userId: body.user_id, method: 'bind', host: 'panel.felis.test' });
    const [user] = await deps.database.db.select().from(users).where(eq(users.id, body.user_id));
    expect(user).toMatchObject({ role: 'user', username: `mc_${mcUuid.replaceAll('-', '').slice(0, 12)}` });

    const me = await createTestApps(deps).external.request('/api/v1/me', { headers: { ...PANEL, Cookie: `svc_session=${token}` } });
    expect(me.status).toBe(200);

    const again = await bind(deps, (await mintCode(deps, mcUuid)).code);
    expect(again.status).toBe(200);
    expect(((await again.json()) as { user_id: string }).user_id).toBe(body.user_id);
  });

  it('is single use, expires after 10 minutes, and refuses anything that is not a live code with 400 invalid_code', async () => {
    const deps = createTestDeps(database());
    const minted = await mintCode(deps, randomMcUuid());
    expect((await bind(deps, minted.code)).status).toBe(200);
    const reused = await bind(deps, minted.code);
    expect(reused.status).toBe(400);
    expect((await errorOf(reused)).code).toBe('invalid_code');

    const late = await mintCode(deps, randomMcUuid());
    deps.clock.advance(10 * 60_000);
    expect((await errorOf(await bind(deps, late.code))).code).toBe('invalid_code');
    for (const code of ['ZZZZZZZZ', 'not a code', '0000000O']) {
      const res = await bind(deps, code);
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe('invalid_code');
    }
  });

  it('refuses a staff UUID with 403 staff_account and leaves the code unspent', async () => {
    const deps = createTestDeps(database());
    const admin = await createUser(deps, { role: 'admin' });
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: admin.id, mcUuid });
    const minted = await mintCode(deps, mcUuid);
    const res = await bind(deps, minted.code);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('staff_account');
    expect(res.headers.get('set-cookie')).toBeNull();
    const [row] = await deps.database.db.select().from(linkCodes).where(eq(linkCodes.codeHash, linkCodeHash(minted.code)));
    expect(row!.usedAt).toBeNull();
  });

  it('refuses a disabled player account with 403 account_disabled', async () => {
    const deps = createTestDeps(database());
    const player = await createUser(deps, { disabled: true });
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: player.id, mcUuid });
    const res = await bind(deps, (await mintCode(deps, mcUuid)).code);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('account_disabled');
  });

  it('answers 403 local_auth_disabled when local sessions are off, and 403 forbidden on the operator console host', async () => {
    const off = createTestDeps(database(), { env: { LOCAL_AUTH: 'off' } });
    const res = await bind(off, (await mintCode(off, randomMcUuid())).code);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('local_auth_disabled');

    const deps = createTestDeps(database());
    const onConsole = await bind(deps, (await mintCode(deps, randomMcUuid())).code, { Host: 'console.felis.test' });
    expect(onConsole.status).toBe(403);
    expect((await errorOf(onConsole)).code).toBe('forbidden');
  });

  it('lets exactly one of 50 concurrent redeems of one code win; the others get 400, never 500', async () => {
    const deps = createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-test-ip' } });
    const mcUuid = randomMcUuid();
    const minted = await mintCode(deps, mcUuid);
    const { external } = createTestApps(deps);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        external.request('/api/v1/auth/bind', jsonRequest('POST', { code: minted.code }, { ...PANEL, 'x-test-ip': `203.0.113.${i + 1}` })),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(49);
    const links = await deps.database.db.select().from(linkedAccounts).where(eq(linkedAccounts.mcUuid, mcUuid));
    expect(links).toHaveLength(1);
  });

  describeBadBodies(database, [{ method: 'POST', path: '/api/v1/auth/bind' }]);
});

describe('web link start and verify', () => {
  const database = useTestDatabase();

  it('start reports the link state with instructions; verify links the code’s UUID to the signed-in account', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const user = await createUser(deps, { email: 'alex@example.com', emailVerified: true });
    const s = await signIn(deps, { userId: user.id });
    const start = async () => (await (await external.request('/api/v1/account/link/start', { method: 'POST', headers: s.headers })).json()) as { linked: boolean; instructions: string };
    expect(await start()).toEqual({ linked: false, instructions: expect.stringContaining('/link') });

    const mcUuid = v3Uuid();
    const minted = await mintCode(deps, mcUuid);
    const res = await external.request('/api/v1/account/link/verify', jsonRequest('POST', { code: minted.code }, s.headers));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ linked: true, mc_uuid: mcUuid, auth_source: 'thirdparty' });
    expect((await start()).linked).toBe(true);
    expect(await linkStatus(deps, mcUuid)).toBe(true);
  });

  it('answers 409 already_linked when another account holds the UUID, without spending the code', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const holder = await createUser(deps);
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: holder.id, mcUuid });
    const other = await signIn(deps, { userId: (await createUser(deps)).id });
    const minted = await mintCode(deps, mcUuid);
    const res = await external.request('/api/v1/account/link/verify', jsonRequest('POST', { code: minted.code }, other.headers));
    expect(res.status).toBe(409);
    expect((await errorOf(res)).code).toBe('already_linked');
    const holderSession = await signIn(deps, { userId: holder.id });
    const own = await external.request('/api/v1/account/link/verify', jsonRequest('POST', { code: minted.code }, holderSession.headers));
    expect(own.status).toBe(200);
  });

  it('throttles wrong link codes per account with 429 and Retry-After; another account keeps its own attempts (issue 30, item 13)', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const guesserId = (await createUser(deps)).id;
    const guesser = await signIn(deps, { userId: guesserId });
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 60; i++) {
      const res = await external.request('/api/v1/account/link/verify', jsonRequest('POST', { code: 'ABCDEFGH' }, guesser.headers));
      statuses.push(res.status);
      if (res.status === 429) refused ??= res;
    }
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(10);
    expect(statuses.slice(-40).every((s) => s === 429)).toBe(true);
    expect((await errorOf(refused!)).code).toBe('rate_limited');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    // A right code from the guesser is refused too while the limit holds: guessing earns nothing.
    const minted = await mintCode(deps, randomMcUuid());
    expect((await external.request('/api/v1/account/link/verify', jsonRequest('POST', { code: minted.code }, guesser.headers))).status).toBe(429);
    // Someone else links at once, and the guesser again once the allowance refills.
    const other = await signIn(deps, { userId: (await createUser(deps)).id });
    expect((await external.request('/api/v1/account/link/verify', jsonRequest('POST', { code: minted.code }, other.headers))).status).toBe(200);
    deps.clock.advance(10 * 60_000);
    // A fresh sign-in: linking is guarded, and this account has no factor but signing in (issue 43).
    const again = await signIn(deps, { userId: guesserId });
    expect((await external.request('/api/v1/account/link/verify', jsonRequest('POST', { code: 'ABCDEFGH' }, again.headers))).status).toBe(400);
  });

  it('answers 400 invalid_code for a wrong code', async () => {
    const deps = createTestDeps(database());
    const s = await signIn(deps, { userId: (await createUser(deps)).id });
    const res = await createTestApps(deps).external.request('/api/v1/account/link/verify', jsonRequest('POST', { code: 'ABCDEFGH' }, s.headers));
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('invalid_code');
  });

  describeTierMatrix(database, 'app', [
    { method: 'POST', path: '/api/v1/account/link/start', setupAllowed: true },
    { method: 'POST', path: '/api/v1/account/link/verify', body: { code: 'ABCDEFGH' }, setupAllowed: true },
  ]);
  describeBadBodies(database, [
    {
      method: 'POST',
      path: '/api/v1/account/link/verify',
      headers: async (deps) => (await signIn(deps, { userId: (await createUser(deps)).id })).headers,
    },
  ]);
});

describe('housekeeping', () => {
  const database = useTestDatabase();

  it('drops link codes and operator-login requests an hour past expiry, and nothing live', async () => {
    const deps = createTestDeps(database());
    const old = await mintCode(deps, randomMcUuid());
    deps.clock.advance(71 * 60_000);
    const fresh = await mintCode(deps, randomMcUuid());
    await purgeIdentityCodes(deps.database.db, deps.clock.now());
    const left = await deps.database.db.select({ codeHash: linkCodes.codeHash }).from(linkCodes);
    expect(left.map((r) => r.codeHash)).toContain(linkCodeHash(fresh.code));
    expect(left.map((r) => r.codeHash)).not.toContain(linkCodeHash(old.code));
  });
});
