import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { panelAuthenticator, passkeyFixture } from '../../../test/helpers/passkeys.js';
import { createUser, signIn, type SignedIn } from '../../../test/helpers/sessions.js';
import { startSmtp, type TestSmtp } from '../../../test/helpers/smtp.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';
import type { SignInMethod } from '../../db/schema/accounts.js';
import { hashPassword } from '../auth/password.js';
import { REAUTH_WINDOW_MS } from '../accounts/sessions/proofs.js';

describe('reauth', () => {
  const database = useTestDatabase();
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp();
  });
  afterAll(async () => {
    await smtp.close();
  });
  const withMail = () => createTestDeps(database(), { overrides: { mail: smtp.adapter() } });
  const app = (deps: TestDeps) => createTestApps(deps).external;
  const address = () => `r-${randomUUID()}@example.com`;
  const status = async (deps: TestDeps, s: SignedIn) => (await app(deps).request('/api/v1/account/reauth', { headers: s.headers })).json();
  const post = (deps: TestDeps, path: string, s: SignedIn, body?: unknown) =>
    app(deps).request(path, body === undefined ? { method: 'POST', headers: s.headers } : jsonRequest('POST', body, s.headers));

  describe('status', () => {
    it('asks an account with no factor for a fresh sign-in: any door counts for 5 minutes, then it is needed again', async () => {
      const deps = withMail();
      const user = await createUser(deps, { email: address() });
      const s = await signIn(deps, { userId: user.id, method: 'bind' });
      const until = new Date(deps.clock.now().getTime() + REAUTH_WINDOW_MS).toISOString();
      expect(await status(deps, s)).toEqual({ needed: false, until, factors: ['sign_in'] });
      deps.clock.advance(REAUTH_WINDOW_MS);
      expect(await status(deps, s)).toEqual({ needed: true, factors: ['sign_in'] });
    });

    it('counts passkey, e-mail code, operator login and setup token sign-ins for 5 minutes; bind code and password never', async () => {
      const deps = withMail();
      const user = await createUser(deps, { email: address(), emailVerified: true });
      const proving: SignInMethod[] = ['passkey', 'email_otp', 'operator_login', 'setup_token'];
      for (const method of proving) {
        const s = await signIn(deps, { userId: user.id, method });
        const until = new Date(deps.clock.now().getTime() + REAUTH_WINDOW_MS).toISOString();
        expect(await status(deps, s), method).toEqual({ needed: false, until, factors: ['email'] });
      }
      for (const method of ['bind', 'password'] as SignInMethod[]) {
        expect(await status(deps, await signIn(deps, { userId: user.id, method })), method).toEqual({ needed: true, factors: ['email'] });
      }
      const s = await signIn(deps, { userId: user.id, method: 'email_otp' });
      deps.clock.advance(REAUTH_WINDOW_MS);
      expect(await status(deps, s)).toEqual({ needed: true, factors: ['email'] });
    });

    it('offers staff a passkey or signing in again, never an e-mail code; no mail relay, no e-mail factor', async () => {
      const deps = withMail();
      const staff = await createUser(deps, { role: 'admin', email: address(), emailVerified: true });
      const s = await signIn(deps, { userId: staff.id, method: 'bind', host: 'console.felis.test' });
      expect(await status(deps, s)).toEqual({ needed: true, factors: ['sign_in'] });
      const start = await post(deps, '/api/v1/account/reauth/email/start', s);
      expect([start.status, (await errorOf(start)).code]).toEqual([403, 'staff_reauth']);
      const noMail = createTestDeps(database());
      const player = await createUser(noMail, { email: address(), emailVerified: true });
      expect(await status(noMail, await signIn(noMail, { userId: player.id, method: 'bind' }))).toEqual({ needed: true, factors: [] });
    });
  });

  describe('proof by e-mail code', () => {
    it('mails a code to the verified address over SMTP; typing it back gives the proof', async () => {
      const deps = withMail();
      const email = address();
      const user = await createUser(deps, { email, emailVerified: true });
      const s = await signIn(deps, { userId: user.id, method: 'bind' });
      const start = await post(deps, '/api/v1/account/reauth/email/start', s);
      expect([start.status, await start.json()]).toEqual([202, { sent: true, expires_at: '2026-06-01T12:10:00.000Z' }]);
      const again = await post(deps, '/api/v1/account/reauth/email/start', s);
      expect([again.status, (await errorOf(again)).code]).toEqual([429, 'otp_resend_cooldown']);
      const wrong = await post(deps, '/api/v1/account/reauth/email/verify', s, { code: smtp.lastCode(email) === '000000' ? '111111' : '000000' });
      expect([wrong.status, (await errorOf(wrong)).code]).toEqual([400, 'invalid_code']);
      deps.clock.advance(1000);
      const ok = await post(deps, '/api/v1/account/reauth/email/verify', s, { code: smtp.lastCode(email) });
      expect([ok.status, await ok.json()]).toEqual([200, { ok: true, until: '2026-06-01T12:05:01.000Z' }]);
      expect(await status(deps, s)).toEqual({ needed: false, until: '2026-06-01T12:05:01.000Z', factors: ['email'] });
      // The proof belongs to that session only.
      expect(await status(deps, await signIn(deps, { userId: user.id, method: 'bind' }))).toMatchObject({ needed: true });
    });

    it('answers 409 no_step_up_factor without a verified address, 503 mail_unavailable without a relay', async () => {
      const deps = withMail();
      const user = await createUser(deps, { email: address(), emailVerified: false });
      const s = await signIn(deps, { userId: user.id });
      const res = await post(deps, '/api/v1/account/reauth/email/start', s);
      expect([res.status, (await errorOf(res)).code]).toEqual([409, 'no_step_up_factor']);
      const noMail = createTestDeps(database());
      const other = await createUser(noMail, { email: address(), emailVerified: true });
      const none = await post(noMail, '/api/v1/account/reauth/email/start', await signIn(noMail, { userId: other.id }));
      expect([none.status, (await errorOf(none)).code]).toEqual([503, 'mail_unavailable']);
    });
  });

  describe('proof by passkey', () => {
    it('asserts one of my passkeys; the ceremony belongs to the session that began it', async () => {
      const f = passkeyFixture(database());
      const user = await createUser(f.deps);
      const authenticator = panelAuthenticator();
      await f.register(await signIn(f.deps, { userId: user.id, method: 'bind' }), authenticator);
      const s = await signIn(f.deps, { userId: user.id, method: 'bind' });
      expect(await status(f.deps, s)).toEqual({ needed: true, factors: ['passkey'] });
      const begin = await post(f.deps, '/api/v1/account/reauth/passkey/begin', s);
      const { publicKey } = (await begin.json()) as { publicKey: { challenge: string; allowCredentials: Array<{ id: string }> } };
      expect(publicKey.allowCredentials).toHaveLength(1);
      // Another session of the account cannot finish this session's ceremony.
      const other = await signIn(f.deps, { userId: user.id, method: 'bind' });
      const stolen = await post(f.deps, '/api/v1/account/reauth/passkey/finish', other, { assertion: authenticator.assert(publicKey) });
      expect([stolen.status, (await errorOf(stolen)).code]).toEqual([400, 'passkey_login_invalid']);
      const again = (await (await post(f.deps, '/api/v1/account/reauth/passkey/begin', s)).json()) as { publicKey: typeof publicKey };
      const ok = await post(f.deps, '/api/v1/account/reauth/passkey/finish', s, { assertion: authenticator.assert(again.publicKey) });
      expect([ok.status, await ok.json()]).toEqual([200, { ok: true, until: '2026-06-01T12:05:00.000Z' }]);
      expect(await status(f.deps, s)).toMatchObject({ needed: false });
    });

    it('answers 400 no_passkey to an account without one', async () => {
      const deps = withMail();
      const user = await createUser(deps);
      const res = await post(deps, '/api/v1/account/reauth/passkey/begin', await signIn(deps, { userId: user.id }));
      expect([res.status, (await errorOf(res)).code]).toEqual([400, 'no_passkey']);
    });
  });

  describe('the guard on changes to the ways in', () => {
    it('refuses a password change and an e-mail change with 403 reauth_required until a proof is given', async () => {
      const deps = withMail();
      const email = address();
      const user = await createUser(deps, { email, emailVerified: true, passwordHash: await hashPassword('correct horse battery') });
      const s = await signIn(deps, { userId: user.id, method: 'bind' });
      const change = () => post(deps, '/api/v1/auth/change-password', s, { current_password: 'correct horse battery', new_password: 'staple battery horse' });
      const newEmail = () => post(deps, '/api/v1/account/email/start', s, { email: address() });
      expect((await errorOf(await change())).code).toBe('reauth_required');
      expect((await errorOf(await newEmail())).code).toBe('reauth_required');
      await post(deps, '/api/v1/account/reauth/email/start', s);
      expect((await post(deps, '/api/v1/account/reauth/email/verify', s, { code: smtp.lastCode(email) })).status).toBe(200);
      expect((await change()).status).toBe(200);
      deps.clock.advance(61_000);
      expect((await newEmail()).status).toBe(202);
      deps.clock.advance(REAUTH_WINDOW_MS);
      expect((await errorOf(await newEmail())).code).toBe('reauth_required');
    });
  });

  describe('an account with no passkey and no verified e-mail', () => {
    it('refuses a player\'s password and e-mail change on a 30-minute-old bind-code or password session, and takes them after a fresh sign-in', async () => {
      const deps = withMail();
      const user = await createUser(deps, { email: address(), passwordHash: await hashPassword('correct horse battery') });
      for (const method of ['bind', 'password'] as SignInMethod[]) {
        const old = await signIn(deps, { userId: user.id, method });
        deps.clock.advance(30 * 60_000);
        const newEmail = await post(deps, '/api/v1/account/email/start', old, { email: address() });
        expect([newEmail.status, (await errorOf(newEmail)).code], method).toEqual([403, 'reauth_required']);
        const change = await post(deps, '/api/v1/auth/change-password', old, { current_password: 'correct horse battery', new_password: 'correct horse battery' });
        expect([change.status, (await errorOf(change)).code], method).toEqual([403, 'reauth_required']);
      }
      const fresh = await signIn(deps, { userId: user.id, method: 'bind' });
      expect((await post(deps, '/api/v1/account/email/start', fresh, { email: address() })).status).toBe(202);
    });

    it('refuses staff a guarded change (linking a game profile) on a 20-minute-old password session', async () => {
      const deps = withMail();
      const staff = await createUser(deps, { role: 'owner', email: address() });
      const old = await signIn(deps, { userId: staff.id, method: 'password' });
      // Staff sessions end after 30 idle minutes: 20 is old enough and still signed in.
      deps.clock.advance(20 * 60_000);
      expect(await status(deps, old)).toEqual({ needed: true, factors: ['sign_in'] });
      const link = await post(deps, '/api/v1/account/link/profile', old, { source: 'mojang', profile_uuid: randomUUID() });
      expect([link.status, (await errorOf(link)).code]).toEqual([403, 'reauth_required']);
    });
  });

  describeTierMatrix(database, 'app', [
    { method: 'get', path: '/api/v1/account/reauth', setupAllowed: true },
    { method: 'post', path: '/api/v1/account/reauth/passkey/begin', setupAllowed: true },
    { method: 'post', path: '/api/v1/account/reauth/passkey/finish', body: {}, setupAllowed: true },
    { method: 'post', path: '/api/v1/account/reauth/email/start', setupAllowed: true },
    { method: 'post', path: '/api/v1/account/reauth/email/verify', body: {}, setupAllowed: true },
  ]);

  const signedIn = async (deps: TestDeps) => (await signIn(deps, { userId: (await createUser(deps)).id })).headers;
  describeBadBodies(database, [
    { method: 'POST', path: '/api/v1/account/reauth/passkey/finish', headers: signedIn },
    { method: 'POST', path: '/api/v1/account/reauth/email/verify', headers: signedIn },
  ]);
});
