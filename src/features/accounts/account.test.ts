import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { startSmtp, type TestSmtp } from '../../../test/helpers/smtp.js';
import { auditLog } from '../../db/schema/audit.js';
import { users } from '../../db/schema/accounts.js';

describe('account routes', () => {
  const database = useTestDatabase();
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp({ refuse: (a) => a.startsWith('bounce') });
  });
  afterAll(async () => {
    await smtp.close();
  });
  const withMail = () => createTestDeps(database(), { overrides: { mail: smtp.adapter() } });
  const app = (deps: TestDeps) => createTestApps(deps).external;
  const mail = () => `m-${randomUUID()}@example.com`;

  describe('GET /api/v1/me', () => {
    it('describes a player, with email "" when the account has none (always present, as the original)', async () => {
      const deps = createTestDeps(database());
      const user = await createUser(deps);
      const s = await signIn(deps, { userId: user.id });
      const res = await app(deps).request('/api/v1/me', { headers: s.headers });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        user_id: user.id,
        username: user.username,
        email: '',
        email_verified: false,
        role: 'user',
        is_admin: false,
        is_owner: false,
        must_change_password: false,
        setup_required: false,
      });
    });

    it('reports an owner as admin and owner, with its address', async () => {
      const deps = createTestDeps(database());
      const email = mail();
      const owner = await createUser(deps, { role: 'owner', email, emailVerified: true });
      const s = await signIn(deps, { userId: owner.id });
      const body = (await (await app(deps).request('/api/v1/me', { headers: s.headers })).json()) as Record<string, unknown>;
      expect(body).toMatchObject({ role: 'admin', is_admin: true, is_owner: true, email, email_verified: true });
    });

    it('offers no staff pages on the panel host: is_admin and is_owner are false there, the role stays', async () => {
      const deps = createTestDeps(database());
      const owner = await createUser(deps, { role: 'owner' });
      const s = await signIn(deps, { userId: owner.id, host: deps.config.panelHost });
      const body = (await (await app(deps).request('/api/v1/me', { headers: s.headers })).json()) as Record<string, unknown>;
      expect(body).toMatchObject({ role: 'admin', is_admin: false, is_owner: false });
    });
  });

  describe('own sessions', () => {
    it('lists live sessions newest first with current, and revokes one', async () => {
      const deps = createTestDeps(database());
      const user = await createUser(deps);
      const first = await signIn(deps, { userId: user.id, userAgent: 'x'.repeat(300) });
      deps.clock.advance(1000);
      const second = await signIn(deps, { userId: user.id });
      const list = await app(deps).request('/api/v1/account/sessions', { headers: second.headers });
      expect(list.status).toBe(200);
      const { sessions } = (await list.json()) as { sessions: Array<Record<string, unknown>> };
      expect(sessions.map((s) => [s.token_hash, s.current])).toEqual([
        [second.tokenHash, true],
        [first.tokenHash, false],
      ]);
      expect(sessions[1]).toMatchObject({ user_agent: 'x'.repeat(256), client_ip: '127.0.0.1' });
      expect(Object.keys(sessions[0]!).sort()).toEqual(
        ['client_ip', 'created_at', 'current', 'expires_at', 'last_seen_at', 'token_hash', 'user_agent'].sort(),
      );

      const del = await app(deps).request(`/api/v1/account/sessions/${first.tokenHash}`, { method: 'DELETE', headers: second.headers });
      expect(del.status).toBe(200);
      expect(await del.json()).toEqual({ ok: true, signed_out: false });
      expect(del.headers.get('set-cookie')).toBeNull();
      expect((await app(deps).request('/api/v1/me', { headers: first.headers })).status).toBe(401);
      const audit = await deps.database.db.select().from(auditLog).where(eq(auditLog.target, user.id));
      expect(audit.map((a) => a.action)).toContain('session.revoke');
      // Again: gone.
      const again = await app(deps).request(`/api/v1/account/sessions/${first.tokenHash}`, { method: 'DELETE', headers: second.headers });
      expect(again.status).toBe(404);
      expect((await errorOf(again)).code).toBe('session_not_found');
      // Revoking the session of the request itself signs out: signed_out, and the cookie is cleared.
      const own = await app(deps).request(`/api/v1/account/sessions/${second.tokenHash}`, { method: 'DELETE', headers: second.headers });
      expect(own.status).toBe(200);
      expect(await own.json()).toEqual({ ok: true, signed_out: true });
      expect(own.headers.get('set-cookie')).toMatch(/svc_session=;/);
      expect((await app(deps).request('/api/v1/me', { headers: second.headers })).status).toBe(401);
    });

    it("never revokes another user's session (404) and refuses a malformed hash (400)", async () => {
      const deps = createTestDeps(database());
      const a = await createUser(deps);
      const b = await createUser(deps);
      const sa = await signIn(deps, { userId: a.id });
      const sb = await signIn(deps, { userId: b.id });
      const res = await app(deps).request(`/api/v1/account/sessions/${sb.tokenHash}`, { method: 'DELETE', headers: sa.headers });
      expect(res.status).toBe(404);
      expect((await app(deps).request('/api/v1/me', { headers: sb.headers })).status).toBe(200);
      const bad = await app(deps).request('/api/v1/account/sessions/not-a-hash', { method: 'DELETE', headers: sa.headers });
      expect(bad.status).toBe(400);
      expect((await errorOf(bad)).code).toBe('bad_request');
    });

    it('drops a staff session idle 30 minutes from the list', async () => {
      const deps = createTestDeps(database());
      const staff = await createUser(deps, { role: 'admin' });
      const old = await signIn(deps, { userId: staff.id });
      deps.clock.advance(31 * 60_000);
      const fresh = await signIn(deps, { userId: staff.id });
      const { sessions } = (await (await app(deps).request('/api/v1/account/sessions', { headers: fresh.headers })).json()) as {
        sessions: Array<{ token_hash: string }>;
      };
      expect(sessions.map((s) => s.token_hash)).toEqual([fresh.tokenHash]);
      expect(sessions.map((s) => s.token_hash)).not.toContain(old.tokenHash);
    });
  });

  describe('e-mail verification', () => {
    it('counts a verified code as a reauth proof, even for a session that began by bind code', async () => {
      const deps = withMail();
      const user = await createUser(deps);
      const s = await signIn(deps, { userId: user.id, method: 'bind' });
      const email = mail();
      expect((await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers))).status).toBe(202);
      const verify = await app(deps).request('/api/v1/account/email/verify', jsonRequest('POST', { code: smtp.lastCode(email) }, s.headers));
      expect(verify.status).toBe(200);
      const status = (await (await app(deps).request('/api/v1/account/reauth', { headers: s.headers })).json()) as { needed: boolean; until?: string };
      expect(status).toMatchObject({ needed: false, until: new Date(deps.clock.now().getTime() + 5 * 60_000).toISOString() });
    });

    it('mails a code through a real SMTP server and verifies the address once it is typed back', async () => {
      const deps = withMail();
      const user = await createUser(deps);
      const s = await signIn(deps, { userId: user.id });
      const email = mail();
      const start = await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email: email.toUpperCase() }, s.headers));
      expect(start.status).toBe(202);
      const started = (await start.json()) as { sent: boolean; expires_at: string };
      expect(started).toEqual({ sent: true, expires_at: new Date(deps.clock.now().getTime() + 600_000).toISOString() });
      expect(JSON.stringify(started)).not.toMatch(/\d{6}/);
      const code = smtp.lastCode(email);
      expect(code).toMatch(/^\d{6}$/);
      const verify = await app(deps).request('/api/v1/account/email/verify', jsonRequest('POST', { code }, s.headers));
      expect(verify.status).toBe(200);
      expect(await verify.json()).toEqual({ verified: true, email });
      const [row] = await deps.database.db.select().from(users).where(eq(users.id, user.id));
      expect(row).toMatchObject({ email, emailVerified: true });
      // A code works once.
      const replay = await app(deps).request('/api/v1/account/email/verify', jsonRequest('POST', { code }, s.headers));
      expect(replay.status).toBe(400);
      expect((await errorOf(replay)).code).toBe('invalid_code');
    });

    it('ends setup lockdown once the owner verifies an address', async () => {
      const deps = withMail();
      const owner = await createUser(deps, { role: 'owner', inSetup: true });
      const s = await signIn(deps, { userId: owner.id, method: 'setup_token' });
      expect((await app(deps).request('/api/v1/users', { headers: s.headers })).status).toBe(403);
      const email = mail();
      expect((await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers))).status).toBe(202);
      const verify = await app(deps).request('/api/v1/account/email/verify', jsonRequest('POST', { code: smtp.lastCode(email) }, s.headers));
      expect(verify.status).toBe(200);
      expect((await app(deps).request('/api/v1/users', { headers: s.headers })).status).toBe(200);
    });

    it('supersedes the prior code with a new request, and holds resends for 60 s with 429', async () => {
      const deps = withMail();
      const user = await createUser(deps);
      const s = await signIn(deps, { userId: user.id });
      const email = mail();
      await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers));
      const firstCode = smtp.lastCode(email)!;
      const early = await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers));
      expect(early.status).toBe(429);
      expect((await errorOf(early)).code).toBe('otp_resend_cooldown');
      expect(early.headers.get('retry-after')).toBe('60');
      // Another account asking for the same recipient is held too.
      const other = await createUser(deps);
      const so = await signIn(deps, { userId: other.id });
      expect((await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, so.headers))).status).toBe(429);
      deps.clock.advance(61_000);
      expect((await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers))).status).toBe(202);
      const secondCode = smtp.lastCode(email)!;
      if (firstCode !== secondCode) {
        const old = await app(deps).request('/api/v1/account/email/verify', jsonRequest('POST', { code: firstCode }, s.headers));
        expect(old.status).toBe(400);
      }
      const ok = await app(deps).request('/api/v1/account/email/verify', jsonRequest('POST', { code: secondCode }, s.headers));
      expect(ok.status).toBe(200);
    });

    it('refuses an expired code', async () => {
      const deps = withMail();
      const user = await createUser(deps);
      const s = await signIn(deps, { userId: user.id });
      const email = mail();
      await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers));
      deps.clock.advance(10 * 60_000 + 1);
      const res = await app(deps).request('/api/v1/account/email/verify', jsonRequest('POST', { code: smtp.lastCode(email) }, s.headers));
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe('invalid_code');
    });

    it('locks the code after 5 wrong tries with 429, even against 50 concurrent guesses', async () => {
      const deps = withMail();
      const user = await createUser(deps);
      const s = await signIn(deps, { userId: user.id });
      const email = mail();
      await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers));
      const right = smtp.lastCode(email)!;
      const wrong = right === '000000' ? '111111' : '000000';
      const a = app(deps);
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => a.request('/api/v1/account/email/verify', jsonRequest('POST', { code: wrong }, s.headers))),
      );
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((x) => x === 400)).toHaveLength(5);
      expect(statuses.filter((x) => x === 429)).toHaveLength(45);
      expect((await errorOf(answers.find((r) => r.status === 429)!)).code).toBe('too_many_attempts');
      // Locked: even the right code is refused now.
      const late = await a.request('/api/v1/account/email/verify', jsonRequest('POST', { code: right }, s.headers));
      expect(late.status).toBe(429);
    });

    it('answers mail_unavailable without a relay, and mail_undeliverable without the relay text when it refuses', async () => {
      const none = createTestDeps(database());
      const user = await createUser(none);
      const s = await signIn(none, { userId: user.id });
      const res = await app(none).request('/api/v1/account/email/start', jsonRequest('POST', { email: mail() }, s.headers));
      expect(res.status).toBe(503);
      expect((await errorOf(res)).code).toBe('mail_unavailable');

      const deps = withMail();
      const u2 = await createUser(deps);
      const s2 = await signIn(deps, { userId: u2.id });
      const refused = await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email: `bounce-${randomUUID()}@example.com` }, s2.headers));
      expect(refused.status).toBe(502);
      const text = JSON.stringify(await refused.json());
      expect(text).toContain('mail_undeliverable');
      expect(text).not.toContain('relay-internal');
      expect(deps.captured.lines().some((l) => l.msg === 'mail not sent' && String(l.detail).includes('relay-internal'))).toBe(true);
      // The failed send holds no cooldown: a corrected address goes out at once.
      const retry = await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email: mail() }, s2.headers));
      expect(retry.status).toBe(202);
    });

    it("refuses another account's address with 409", async () => {
      const deps = withMail();
      const taken = mail();
      await createUser(deps, { email: taken, emailVerified: true });
      const user = await createUser(deps);
      const s = await signIn(deps, { userId: user.id });
      const res = await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email: taken }, s.headers));
      expect(res.status).toBe(409);
      expect((await errorOf(res)).code).toBe('conflict');
    });

    it('answers 400 for a malformed address', async () => {
      const deps = withMail();
      const user = await createUser(deps);
      const s = await signIn(deps, { userId: user.id });
      for (const email of ['nope', '', 'a@', 42]) {
        const res = await app(deps).request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers));
        expect(res.status).toBe(400);
        expect((await errorOf(res)).code).toBe('bad_request');
      }
    });
  });
});
