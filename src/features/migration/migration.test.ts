import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount, signIn, type SignedIn } from '../../../test/helpers/sessions.js';
import { useTestSmtp } from '../../../test/helpers/smtp.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { linkedAccounts, users } from '../../db/schema/accounts.js';
import { accountMigrations } from '../../db/schema/migration.js';
import { serverClaims } from '../../db/schema/servers.js';
import { passkeyCredentials } from '../../db/schema/passkeys.js';

let n = 0;
const address = () => `mig${++n}-${Date.now().toString(36)}@example.com`;

describe('account migration', () => {
  const database = useTestDatabase();
  const testSmtp = useTestSmtp();

  const setup = () => {
    const deps = createTestDeps(database(), { overrides: { mail: testSmtp().adapter() } });
    return { deps, ...createTestApps(deps) };
  };

  const start = (deps: TestDeps, mcUuid: string) =>
    createTestApps(deps).internal.request('/api/v1/internal/account/migrate/start', jsonRequest('POST', { mc_uuid: mcUuid }, bearer('proxy')));

  /** A linked player with a verified address and a signed-in browser. */
  async function linkedPlayer(deps: TestDeps) {
    const email = address();
    const user = await createUser(deps, { email, emailVerified: true });
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: user.id, mcUuid });
    return { ...user, email, mcUuid, browser: await signIn(deps, { userId: user.id }) };
  }

  const web = (deps: TestDeps, browser: SignedIn) => {
    const { external } = createTestApps(deps);
    return {
      get: async () => (await (await external.request('/api/v1/account/migrate', { headers: browser.headers })).json()) as Record<string, unknown>,
      post: (path: string, body?: unknown) =>
        external.request(`/api/v1/account/migrate/${path}`, body === undefined ? { method: 'POST', headers: browser.headers } : jsonRequest('POST', body, browser.headers)),
    };
  };

  async function confirm(deps: TestDeps, browser: SignedIn, email: string) {
    const w = web(deps, browser);
    const sent = await w.post('confirm/otp/start');
    expect(sent.status).toBe(202);
    const verified = await w.post('confirm/otp/verify', { code: testSmtp().lastCode(email) });
    expect(verified.status).toBe(200);
    expect(await verified.json()).toEqual({ confirmed: true });
  }

  it('in game: 201 initiated for a linked UUID, 404 not_linked otherwise; a new start supersedes the unfinished one', async () => {
    const { deps } = setup();
    const source = await linkedPlayer(deps);
    const res = await start(deps, source.mcUuid);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ started: true, state: 'initiated' });
    await confirm(deps, source.browser, source.email);
    expect(await web(deps, source.browser).get()).toMatchObject({ active: true, state: 'confirmed', confirm_factor: 'email_otp' });

    expect((await start(deps, source.mcUuid)).status).toBe(201);
    expect(await web(deps, source.browser).get()).toEqual({ active: true, state: 'initiated' });
    const rows = await deps.database.db.select().from(accountMigrations).where(eq(accountMigrations.sourceUserId, source.id));
    expect(rows.map((r) => r.state).sort()).toEqual(['initiated', 'superseded']);

    const unknown = await start(deps, randomMcUuid());
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).code).toBe('not_linked');
  });

  it('moves the source’s two servers to the target; the UUID link and credentials stay; the source is retired', async () => {
    const { deps, internal, external } = setup();
    const source = await linkedPlayer(deps);
    const target = await linkedPlayer(deps);
    const servers = [addServer(deps).spec.name, addServer(deps).spec.name].sort();
    for (const name of servers) {
      const claimed = await internal.request(`/api/v1/internal/servers/${name}/claim`, jsonRequest('POST', { mc_uuid: source.mcUuid }, bearer('proxy')));
      expect(claimed.status).toBe(200);
    }
    expect((await start(deps, source.mcUuid)).status).toBe(201);
    const w = web(deps, source.browser);
    expect(await w.get()).toEqual({ active: true, state: 'initiated' });

    const early = await w.post('issue-code', { target_user_id: target.id });
    expect(early.status).toBe(409);
    expect((await errorOf(early)).code).toBe('not_confirmed');

    await confirm(deps, source.browser, source.email);
    const self = await w.post('issue-code', { target_user_id: source.id });
    expect((await errorOf(self)).code).toBe('invalid_target');
    const issued = await w.post('issue-code', { target_user_id: target.id });
    expect(issued.status).toBe(201);
    const { code } = (await issued.json()) as { code: string };
    expect(code).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
    expect(await w.get()).toMatchObject({ active: true, state: 'code_issued', target_user_id: target.id, confirm_factor: 'email_otp' });

    const bystander = await signIn(deps, { userId: (await createUser(deps)).id });
    const stolen = await web(deps, bystander).post('redeem', { code });
    expect(stolen.status).toBe(400);
    expect((await errorOf(stolen)).code).toBe('invalid_code');

    const redeemed = await web(deps, target.browser).post('redeem', { code: code.toLowerCase() });
    expect(redeemed.status).toBe(200);
    expect(await redeemed.json()).toEqual({ migrated: true, servers_moved: 2, servers });
    const owners = await deps.database.db.select().from(serverClaims).where(eq(serverClaims.userId, target.id));
    expect(owners.map((r) => r.serverName).sort()).toEqual(servers);
    const mine = (await (await external.request('/api/v1/me/servers', { headers: target.browser.headers })).json()) as { servers: Array<{ name: string; owned: boolean }> };
    expect(mine.servers.filter((s) => s.owned).map((s) => s.name).sort()).toEqual(servers);

    const [link] = await deps.database.db.select().from(linkedAccounts).where(eq(linkedAccounts.mcUuid, source.mcUuid));
    expect(link!.userId).toBe(source.id);
    const [sourceRow] = await deps.database.db.select().from(users).where(eq(users.id, source.id));
    expect(sourceRow!.email).toBe(source.email);
    expect((await web(deps, target.browser).post('redeem', { code })).status).toBe(400);

    const retired = await start(deps, source.mcUuid);
    expect(retired.status).toBe(409);
    expect((await errorOf(retired)).code).toBe('account_retired');
  });

  it('a confirmation belongs to the session that gave it, for 10 minutes', async () => {
    const { deps } = setup();
    const source = await linkedPlayer(deps);
    const target = await createUser(deps);
    expect((await start(deps, source.mcUuid)).status).toBe(201);
    await confirm(deps, source.browser, source.email);
    const other = await signIn(deps, { userId: source.id });
    expect(await web(deps, other).get()).toEqual({ active: true, state: 'initiated' });
    expect((await errorOf(await web(deps, other).post('issue-code', { target_user_id: target.id }))).code).toBe('not_confirmed');
    deps.clock.advance(10 * 60_000);
    expect(await web(deps, source.browser).get()).toEqual({ active: true, state: 'initiated' });
    expect((await errorOf(await web(deps, source.browser).post('issue-code', { target_user_id: target.id }))).code).toBe('not_confirmed');
  });

  it('step-up errors: no migration 404, no verified address 409, resend cooldown 429, wrong codes 400 then 429', async () => {
    const { deps } = setup();
    const source = await linkedPlayer(deps);
    const w = web(deps, source.browser);
    expect(await w.get()).toEqual({ active: false });
    const none = await w.post('confirm/otp/start');
    expect(none.status).toBe(404);
    expect((await errorOf(none)).code).toBe('no_migration');

    expect((await start(deps, source.mcUuid)).status).toBe(201);
    expect((await w.post('confirm/otp/start')).status).toBe(202);
    const again = await w.post('confirm/otp/start');
    expect(again.status).toBe(429);
    expect((await errorOf(again)).code).toBe('otp_resend_cooldown');
    expect(again.headers.get('retry-after')).toBe('60');
    const right = testSmtp().lastCode(source.email)!;
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await errorOf(await w.post('confirm/otp/verify', { code: wrong }))).code).toBe('invalid_code');
    const locked = await w.post('confirm/otp/verify', { code: right });
    expect(locked.status).toBe(429);
    expect((await errorOf(locked)).code).toBe('too_many_attempts');

    const unverified = await createUser(deps, { email: address() });
    const uuid = randomMcUuid();
    await linkAccount(deps, { userId: unverified.id, mcUuid: uuid });
    expect((await start(deps, uuid)).status).toBe(201);
    const noFactor = await web(deps, await signIn(deps, { userId: unverified.id })).post('confirm/otp/start');
    expect(noFactor.status).toBe(409);
    expect((await errorOf(noFactor)).code).toBe('no_step_up_factor');
  });

  it('an account with a passkey confirms with it: e-mail is refused, the ceremony lists its credential, a bad assertion is 400', async () => {
    const { deps } = setup();
    const source = await linkedPlayer(deps);
    const w = web(deps, source.browser);
    const none = await w.post('confirm/passkey/begin');
    expect(none.status).toBe(404);
    expect((await errorOf(none)).code).toBe('no_migration');
    expect((await start(deps, source.mcUuid)).status).toBe(201);
    const noPasskey = await w.post('confirm/passkey/begin');
    expect(noPasskey.status).toBe(400);
    expect((await errorOf(noPasskey)).code).toBe('no_passkey');

    await deps.database.db.insert(passkeyCredentials).values({
      userId: source.id,
      credentialId: 'bWlncmF0aW9uLWNyZWRlbnRpYWw',
      publicKey: 'cHVibGlj',
      counter: 0,
      transports: ['internal'],
      deviceType: 'singleDevice',
      backedUp: false,
      createdAt: deps.clock.now(),
    });
    const emailRefused = await w.post('confirm/otp/start');
    expect(emailRefused.status).toBe(409);
    expect((await errorOf(emailRefused)).code).toBe('passkey_required');

    const begun = await w.post('confirm/passkey/begin');
    expect(begun.status).toBe(200);
    const { publicKey } = (await begun.json()) as { publicKey: { challenge: string; allowCredentials: Array<{ id: string }> } };
    expect(publicKey.challenge).toEqual(expect.any(String));
    expect(publicKey.allowCredentials.map((c) => c.id)).toEqual(['bWlncmF0aW9uLWNyZWRlbnRpYWw']);

    const forged = {
      id: 'bWlncmF0aW9uLWNyZWRlbnRpYWw',
      rawId: 'bWlncmF0aW9uLWNyZWRlbnRpYWw',
      type: 'public-key',
      response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' },
    };
    const refused = await w.post('confirm/passkey/finish', { assertion: forged });
    expect(refused.status).toBe(400);
    expect((await errorOf(refused)).code).toBe('passkey_login_invalid');
    expect(await w.get()).toEqual({ active: true, state: 'initiated' });
  });

  it('a disabled source cannot start: 409 account_retired', async () => {
    const { deps } = setup();
    const user = await createUser(deps, { disabled: true });
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: user.id, mcUuid });
    const res = await start(deps, mcUuid);
    expect(res.status).toBe(409);
    expect((await errorOf(res)).code).toBe('account_retired');
  });

  it('the in-game start serves the proxy only and refuses bad bodies with 400', async () => {
    const { internal } = setup();
    await expectTierMatrix(internal, [{ method: 'POST', path: '/api/v1/internal/account/migrate/start', access: { tier: 'service', callers: ['proxy'] } }]);
    for (const body of [{}, { mc_uuid: 'x' }, { mc_uuid: randomMcUuid(), extra: 1 }]) {
      const res = await internal.request('/api/v1/internal/account/migrate/start', jsonRequest('POST', body, bearer('proxy')));
      expect(res.status).toBe(400);
    }
  });

  describeTierMatrix(database, 'app', [
    { method: 'GET', path: '/api/v1/account/migrate' },
    { method: 'POST', path: '/api/v1/account/migrate/confirm/otp/start' },
    { method: 'POST', path: '/api/v1/account/migrate/confirm/otp/verify', body: { code: '123456' } },
    { method: 'POST', path: '/api/v1/account/migrate/confirm/passkey/begin' },
    { method: 'POST', path: '/api/v1/account/migrate/issue-code', body: { target_user_id: '00000000-0000-4000-8000-000000000000' } },
    { method: 'POST', path: '/api/v1/account/migrate/redeem', body: { code: 'ABCDEFGH' } },
  ]);
  const signedIn = async (deps: TestDeps) => (await signIn(deps, { userId: (await createUser(deps)).id })).headers;
  describeBadBodies(database, [
    { method: 'POST', path: '/api/v1/account/migrate/confirm/otp/verify', headers: signedIn },
    { method: 'POST', path: '/api/v1/account/migrate/issue-code', headers: signedIn },
    { method: 'POST', path: '/api/v1/account/migrate/redeem', headers: signedIn },
  ]);
});
