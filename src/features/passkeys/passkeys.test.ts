import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { errorOf, jsonRequest } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { panelAuthenticator, passkeyFixture, visitor } from '../../../test/helpers/passkeys.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';
import { users } from '../../db/schema/accounts.js';
import { passkeyCredentials } from '../../db/schema/passkeys.js';
import { deleteAllCredentials, listCredentials } from './credentials.js';

const email = () => `p-${randomUUID()}@example.com`;

describe('passkeys', () => {
  const database = useTestDatabase();

  describe('registration and the credential list', () => {
    it('binds a passkey (201), lists it newest first without its public key, and ends setup lockdown', async () => {
      const f = passkeyFixture(database());
      const user = await createUser(f.deps, { inSetup: true });
      const s = await signIn(f.deps, { userId: user.id, method: 'bind' });
      const authenticator = panelAuthenticator();
      const first = await f.register(s, authenticator, '  Laptop  ');
      expect(first.status).toBe(201);
      const view = (await first.json()) as Record<string, unknown>;
      expect(view).toEqual({ id: expect.any(String), name: 'Laptop', created_at: '2026-06-01T12:00:00.000Z', aaguid: '0f0e0d0c-0b0a-0908-0706-050403020100' });
      expect((await f.deps.database.db.select().from(users).where(eq(users.id, user.id)))[0]!.inSetup).toBe(false);

      // Binding a passkey proved a factor for five minutes; after that, a bind-code sign-in is no
      // proof, and the account now has a passkey to guard: a second one needs reauth.
      f.deps.clock.advance(5 * 60_000 + 1);
      expect(await errorOf(await f.register(s, authenticator))).toMatchObject({ code: 'reauth_required' });
      const fresh = await signIn(f.deps, { userId: user.id, method: 'passkey' });
      const second = await f.register(fresh, authenticator);
      expect(second.status).toBe(201);
      const list = await f.request('/api/v1/account/passkey/credentials', { headers: s.headers });
      const body = (await list.json()) as { credentials: Array<Record<string, unknown>> };
      expect(body.credentials.map((c) => c.name)).toEqual(['', 'Laptop']);
      expect(JSON.stringify(body)).not.toMatch(/public|counter|credential_id/i);
      const [stored] = await f.deps.database.db.select().from(passkeyCredentials).where(eq(passkeyCredentials.id, view.id as string));
      expect(stored).toMatchObject({ userId: user.id, counter: 0, transports: ['internal'], deviceType: 'singleDevice', backedUp: false, lastUsedAt: null });
    });

    it('lists credentials with no relying party configured; the ceremonies answer 503 passkey_unavailable', async () => {
      const f = passkeyFixture(database(), { ROOT_DOMAIN: '', PANEL_HOST: '', CONSOLE_HOST: '' });
      const user = await createUser(f.deps);
      const s = await signIn(f.deps, { userId: user.id, host: 'panel.felis.test' });
      expect((await f.request('/api/v1/account/passkey/credentials', { headers: s.headers })).status).toBe(200);
      expect(await errorOf(await f.request('/api/v1/account/passkey/register/begin', { method: 'POST', headers: s.headers }))).toMatchObject({ code: 'passkey_unavailable' });
      const begin = await f.post('/api/v1/auth/passkey/login/begin', { email: 'a@example.com' }, visitor());
      expect([begin.status, (await errorOf(begin)).code]).toEqual([503, 'passkey_unavailable']);
      const discoverable = await f.post('/api/v1/auth/passkey/login/discoverable/begin', {}, visitor());
      expect(discoverable.status).toBe(503);
    });

    it('answers 400 passkey_challenge_invalid without a live ceremony, invalid_attestation for a bad one, 409 when bound already', async () => {
      const f = passkeyFixture(database());
      const user = await createUser(f.deps);
      const s = await signIn(f.deps, { userId: user.id });
      const authenticator = panelAuthenticator();
      const stray = authenticator.register({ challenge: 'AAAA', user: { id: 'AAAA' } });
      const none = await f.post('/api/v1/account/passkey/register/finish', { attestation: stray }, s.headers);
      expect([none.status, (await errorOf(none)).code]).toEqual([400, 'passkey_challenge_invalid']);

      const begin = (await (await f.request('/api/v1/account/passkey/register/begin', { method: 'POST', headers: s.headers })).json()) as never;
      const foreign = authenticator.register(begin, { origin: 'https://evil.example' });
      const bad = await f.post('/api/v1/account/passkey/register/finish', { attestation: foreign }, s.headers);
      expect([bad.status, (await errorOf(bad)).code]).toEqual([400, 'invalid_attestation']);

      // The same authenticator credential offered to a second account is refused, never rebound.
      const ok = await f.register(s, authenticator);
      expect(ok.status).toBe(201);
      const other = await createUser(f.deps);
      const os = await signIn(f.deps, { userId: other.id });
      const otherBegin = (await (await f.request('/api/v1/account/passkey/register/begin', { method: 'POST', headers: os.headers })).json()) as never;
      const cloned = authenticator.register(otherBegin, { credentialId: authenticator.held.at(-1)!.id.toString('base64url') });
      const conflict = await f.post('/api/v1/account/passkey/register/finish', { attestation: cloned }, os.headers);
      expect([conflict.status, await conflict.text()]).toEqual([409, expect.stringContaining('passkey_already_bound')]);
    });

    it('unbinds only my own passkey (404 for anyone else\'s or an unknown id)', async () => {
      const f = passkeyFixture(database());
      const owner = await createUser(f.deps);
      const so = await signIn(f.deps, { userId: owner.id });
      const created = (await (await f.register(so, panelAuthenticator())).json()) as { id: string };
      const thief = await createUser(f.deps);
      const st = await signIn(f.deps, { userId: thief.id });
      const del = (s: typeof so, id: string) => f.request(`/api/v1/account/passkey/credentials/${id}`, { method: 'DELETE', headers: s.headers });
      expect([(await del(st, created.id)).status]).toEqual([404]);
      expect((await errorOf(await del(st, 'not-a-uuid'))).code).toBe('not_found');
      const mine = await del(so, created.id);
      expect([mine.status, await mine.json()]).toEqual([200, { removed: true }]);
      expect((await del(so, created.id)).status).toBe(404);
    });

    it('deleteAllCredentials (for the staff remediation) unbinds every passkey of one account only', async () => {
      const f = passkeyFixture(database());
      const [a, b] = [await createUser(f.deps), await createUser(f.deps)];
      const sa = await signIn(f.deps, { userId: a.id });
      const key = panelAuthenticator();
      await f.register(sa, key);
      await f.register(sa, key);
      await f.register(await signIn(f.deps, { userId: b.id }), panelAuthenticator());
      const db = f.deps.database.db;
      expect(await deleteAllCredentials(db, a.id)).toBe(2);
      expect(await listCredentials(db, a.id)).toEqual([]);
      expect(await listCredentials(db, b.id)).toHaveLength(1);
      expect(await deleteAllCredentials(db, a.id)).toBe(0);
    });
  });

  describe('sign-in', () => {
    it('by e-mail: options over the account\'s passkeys, then a passkey session', async () => {
      const f = passkeyFixture(database());
      const address = email();
      const user = await createUser(f.deps, { email: address, emailVerified: true });
      const authenticator = panelAuthenticator();
      await f.register(await signIn(f.deps, { userId: user.id }), authenticator);
      const options = await f.loginBegin(address.toUpperCase());
      expect(options).toMatchObject({ rpId: 'felis.test', userVerification: 'required', allowCredentials: [{ id: authenticator.held[0]!.id.toString('base64url') }] });
      const res = await f.post('/api/v1/auth/passkey/login/finish', { email: address, assertion: authenticator.assert(options) }, visitor());
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ user_id: user.id, role: 'user' });
      const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
      const me = await f.request('/api/v1/account/reauth', { headers: { Host: 'panel.felis.test', Cookie: cookie } });
      expect(await me.json()).toMatchObject({ needed: false, factors: ['passkey'] });
    });

    it('by e-mail: 400 no_passkey for an unknown address and for one without a passkey; auth/options lists passkey first', async () => {
      const f = passkeyFixture(database());
      const address = email();
      const user = await createUser(f.deps, { email: address, emailVerified: true });
      for (const who of [email(), address]) {
        const res = await f.post('/api/v1/auth/passkey/login/begin', { email: who }, visitor());
        expect([res.status, (await errorOf(res)).code]).toEqual([400, 'no_passkey']);
      }
      await f.register(await signIn(f.deps, { userId: user.id }), panelAuthenticator());
      const options = await f.post('/api/v1/auth/options', { email: address }, visitor());
      expect((await options.json()) as unknown).toEqual({ methods: ['passkey'] });
    });

    it('by e-mail: another account\'s passkey, a wrong address or a tampered signature is 400 passkey_login_invalid', async () => {
      const f = passkeyFixture(database());
      const [a, b] = [email(), email()];
      const alice = await createUser(f.deps, { email: a });
      const bob = await createUser(f.deps, { email: b });
      const aliceKey = panelAuthenticator();
      const bobKey = panelAuthenticator();
      await f.register(await signIn(f.deps, { userId: alice.id }), aliceKey);
      await f.register(await signIn(f.deps, { userId: bob.id }), bobKey);
      const finish = async (who: string, assertion: unknown) => {
        const res = await f.post('/api/v1/auth/passkey/login/finish', { email: who, assertion }, visitor());
        return [res.status, res.status === 200 ? 'ok' : (await errorOf(res)).code];
      };
      // Bob's passkey answering Alice's ceremony.
      const forAlice = await f.loginBegin(a);
      expect(await finish(a, bobKey.assert(forAlice, { credentialId: bobKey.held[0]!.id.toString('base64url') }))).toEqual([400, 'passkey_login_invalid']);
      // Alice's assertion posted under Bob's address.
      expect(await finish(b, aliceKey.assert(await f.loginBegin(a)))).toEqual([400, 'passkey_login_invalid']);
      const signed = aliceKey.assert(await f.loginBegin(a));
      const tampered = { ...signed, response: { ...signed.response, signature: signed.response.signature.slice(0, -4) + 'AAAA' } };
      expect(await finish(a, tampered)).toEqual([400, 'passkey_login_invalid']);
    });

    it('discoverably: login_id and an empty allowCredentials; the account is the one the passkey and its user handle name', async () => {
      const f = passkeyFixture(database());
      const user = await createUser(f.deps, { role: 'admin' });
      const authenticator = panelAuthenticator();
      await f.register(await signIn(f.deps, { userId: user.id, host: 'panel.felis.test' }), authenticator);
      const begin = await f.post('/api/v1/auth/passkey/login/discoverable/begin', {}, visitor());
      expect(begin.status).toBe(200);
      const { publicKey, login_id } = (await begin.json()) as { publicKey: { challenge: string; allowCredentials: Array<{ id: string }> }; login_id: string };
      expect(publicKey.allowCredentials).toEqual([]);
      expect(login_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const console = { ...visitor(), Host: 'console.felis.test' };
      const res = await f.post('/api/v1/auth/passkey/login/discoverable/finish', { login_id, assertion: authenticator.assert(publicKey) }, console);
      expect([res.status, await res.json()]).toEqual([200, { user_id: user.id, role: 'admin' }]);

      // A user handle naming another account is refused.
      const again = (await (await f.post('/api/v1/auth/passkey/login/discoverable/begin', {}, visitor())).json()) as typeof publicKey & { publicKey: typeof publicKey; login_id: string };
      const lying = authenticator.assert(again.publicKey);
      lying.response.userHandle = Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url');
      const refused = await f.post('/api/v1/auth/passkey/login/discoverable/finish', { login_id: again.login_id, assertion: lying }, visitor());
      expect([refused.status, (await errorOf(refused)).code]).toEqual([400, 'passkey_login_invalid']);
    });

    it('discoverable begin requires the JSON Content-Type and reads no body', async () => {
      const f = passkeyFixture(database());
      const path = '/api/v1/auth/passkey/login/discoverable/begin';
      const none = await f.request(path, { method: 'POST', headers: visitor() });
      expect([none.status, (await errorOf(none)).code]).toEqual([415, 'unsupported_media_type']);
      const form = await f.request(path, { method: 'POST', headers: { ...visitor(), 'Content-Type': 'text/plain' }, body: 'x' });
      expect(form.status).toBe(415);
      // Whatever JSON-typed body comes along is never read: not even malformed JSON is a 400.
      expect((await f.request(path, { method: 'POST', headers: { ...visitor(), 'Content-Type': 'application/json' }, body: '{"not": json' })).status).toBe(200);
      expect((await f.request(path, jsonRequest('POST', {}, visitor()))).status).toBe(200);
    });

    it('LOCAL_AUTH=off closes the passkey doors with 403 local_auth_disabled', async () => {
      const f = passkeyFixture(database(), { LOCAL_AUTH: 'off' });
      for (const [path, body] of [
        ['/api/v1/auth/passkey/login/begin', { email: 'a@example.com' }],
        ['/api/v1/auth/passkey/login/discoverable/begin', {}],
      ] as const) {
        const res = await f.post(path, body, visitor());
        expect([res.status, (await errorOf(res)).code]).toEqual([403, 'local_auth_disabled']);
      }
    });

    it('refuses a player signing in on the console host (403 forbidden)', async () => {
      const f = passkeyFixture(database());
      const address = email();
      const user = await createUser(f.deps, { email: address });
      const authenticator = panelAuthenticator();
      await f.register(await signIn(f.deps, { userId: user.id }), authenticator);
      const assertion = authenticator.assert(await f.loginBegin(address));
      const res = await f.post('/api/v1/auth/passkey/login/finish', { email: address, assertion }, { ...visitor(), Host: 'console.felis.test' });
      expect([res.status, (await errorOf(res)).code]).toEqual([403, 'forbidden']);
    });
  });

  describeTierMatrix(database, 'app', [
    { method: 'post', path: '/api/v1/account/passkey/register/begin', setupAllowed: true },
    { method: 'post', path: '/api/v1/account/passkey/register/finish', body: {}, setupAllowed: true },
    { method: 'get', path: '/api/v1/account/passkey/credentials', setupAllowed: true },
    { method: 'delete', path: `/api/v1/account/passkey/credentials/${randomUUID()}`, setupAllowed: true },
  ]);

  describeBadBodies(database, [
    { method: 'POST', path: '/api/v1/auth/passkey/login/begin' },
    { method: 'POST', path: '/api/v1/auth/passkey/login/finish' },
    { method: 'POST', path: '/api/v1/auth/passkey/login/discoverable/finish' },
    {
      method: 'POST',
      path: '/api/v1/account/passkey/register/finish',
      headers: async (deps) => (await signIn(deps, { userId: (await createUser(deps)).id })).headers,
    },
  ]);
});
