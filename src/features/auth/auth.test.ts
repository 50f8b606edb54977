import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { startSmtp, type TestSmtp } from '../../../test/helpers/smtp.js';
import { sessions, users } from '../../db/schema/accounts.js';
import { openPostgres, type DatabaseHandle } from '../../db/client.js';
import { withDatabase } from '../../../test/global-setup.js';
import { hashPassword } from './password.js';

const PANEL = { Host: 'panel.felis.test' };
const CONSOLE = { Host: 'console.felis.test' };
const PASSWORD = 'correct horse battery';

/** A second, independent connection pool to the same PostgreSQL database (undefined on PGlite). */
async function secondHandle(handle: DatabaseHandle): Promise<DatabaseHandle | undefined> {
  const pg = inject('postgresTemplate');
  if (handle.kind !== 'postgres' || !pg) return undefined;
  const rows = (await handle.db.execute(sql`select current_database() as name`)) as unknown as Array<{ name: string }>;
  return openPostgres(withDatabase(pg.url, rows[0]!.name));
}

/** The cookie a browser would send back, from a real Set-Cookie header. */
function cookieFrom(res: Response): string {
  const header = res.headers.getSetCookie().find((cookie) => cookie.startsWith('svc_session='));
  expect(header).toMatch(/^svc_session=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  return header!.split(';')[0]!;
}

describe('sign-in doors', () => {
  const database = useTestDatabase();
  let hash: string;
  let smtp: TestSmtp;
  beforeAll(async () => {
    hash = await hashPassword(PASSWORD);
    smtp = await startSmtp({ refuse: (a) => a.startsWith('bounce') });
  });
  afterAll(async () => {
    await smtp.close();
  });
  const app = (deps: TestDeps) => createTestApps(deps).external;
  const mail = () => `p-${randomUUID()}@example.com`;
  // Each test speaks from its own address so that the door limits of one never touch another.
  const ipDeps = (overrides: Parameters<typeof createTestDeps>[1] = {}) =>
    createTestDeps(database(), { ...overrides, env: { CLIENT_IP_HEADER: 'x-real-ip', ...overrides.env } });
  const from = () => ({ 'x-real-ip': `10.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}` });

  describe('password login and logout', () => {
    it('signs in with a cookie that round-trips, and logs out idempotently, clearing the cookie', async () => {
      const deps = ipDeps();
      const user = await createUser(deps, { passwordHash: hash, mustChangePassword: true });
      const ip = from();
      const res = await app(deps).request(
        '/api/v1/auth/login',
        jsonRequest('POST', { username: user.username.toUpperCase(), password: PASSWORD }, { ...PANEL, ...ip, 'User-Agent': 'Firefox' }),
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ user_id: user.id, role: 'user', must_change_password: true });
      const cookie = cookieFrom(res);
      const me = await app(deps).request('/api/v1/me', { headers: { ...PANEL, Cookie: cookie } });
      expect(me.status).toBe(200);
      const [row] = await deps.database.db.select().from(sessions).where(eq(sessions.userId, user.id));
      expect(row).toMatchObject({ host: 'panel.felis.test', method: 'password', userAgent: 'Firefox', clientIp: ip['x-real-ip'] });
      // The cookie of the panel never authenticates on the console host.
      expect((await app(deps).request('/api/v1/me', { headers: { ...CONSOLE, Cookie: cookie } })).status).toBe(401);

      for (let i = 0; i < 2; i++) {
        const out = await app(deps).request('/api/v1/auth/logout', { method: 'POST', headers: { ...PANEL, Cookie: cookie } });
        expect(out.status).toBe(200);
        expect(await out.json()).toEqual({ ok: true });
        expect(out.headers.get('set-cookie')).toMatch(/^svc_session=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Lax/);
      }
      expect((await app(deps).request('/api/v1/me', { headers: { ...PANEL, Cookie: cookie } })).status).toBe(401);
      expect((await app(deps).request('/api/v1/auth/logout', { method: 'POST', headers: PANEL })).status).toBe(200);
    });

    it('answers one 401 invalid_credentials for every failure, in equal time for unknown users', { timeout: 90_000 }, async () => {
      const deps = ipDeps();
      const user = await createUser(deps, { passwordHash: hash });
      const noPassword = await createUser(deps);
      const ip = from();
      const attempt = async (username: string, password: string) => {
        const started = performance.now();
        const res = await app(deps).request('/api/v1/auth/login', jsonRequest('POST', { username, password }, { ...PANEL, ...ip }));
        return { ms: performance.now() - started, status: res.status, error: await errorOf(res) };
      };
      const known: number[] = [];
      const unknownTimes: number[] = [];
      let wrong, unknown;
      for (let i = 0; i < 3; i++) {
        wrong = await attempt(user.username, 'wrong password');
        unknown = await attempt(`nobody_${randomUUID()}`, 'wrong password');
        known.push(wrong.ms);
        unknownTimes.push(unknown.ms);
      }
      const passwordless = await attempt(noPassword.username, 'wrong password');
      for (const r of [wrong!, unknown!, passwordless]) {
        expect(r.status).toBe(401);
        expect(r.error.code).toBe('invalid_credentials');
        expect(r.error.message).toBe(wrong!.error.message);
      }
      // Both paths run one scrypt; neither returns early (medians, on a shared machine).
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
      expect(median(unknownTimes)).toBeGreaterThan(median(known) * 0.5);
      expect(median(unknownTimes)).toBeLessThan(median(known) * 2);
    });

    it('answers 403 account_disabled only to the right password of a disabled account', async () => {
      const deps = ipDeps();
      const user = await createUser(deps, { passwordHash: hash, disabled: true });
      const ok = await app(deps).request('/api/v1/auth/login', jsonRequest('POST', { username: user.username, password: PASSWORD }, { ...PANEL, ...from() }));
      expect(ok.status).toBe(403);
      expect((await errorOf(ok)).code).toBe('account_disabled');
      expect(ok.headers.get('set-cookie')).toBeNull();
    });

    it('refuses a player signing in on the console host, and signs staff in there', async () => {
      const deps = ipDeps();
      const player = await createUser(deps, { passwordHash: hash });
      const res = await app(deps).request('/api/v1/auth/login', jsonRequest('POST', { username: player.username, password: PASSWORD }, { ...CONSOLE, ...from() }));
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('forbidden');
      const admin = await createUser(deps, { passwordHash: hash, role: 'admin' });
      const ok = await app(deps).request('/api/v1/auth/login', jsonRequest('POST', { username: admin.username, password: PASSWORD }, { ...CONSOLE, ...from() }));
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { role: string }).role).toBe('admin');
      expect((await app(deps).request('/api/v1/users', { headers: { ...CONSOLE, Cookie: cookieFrom(ok) } })).status).toBe(200);
    });

    it('answers 403 local_auth_disabled on the local doors when LOCAL_AUTH is off', async () => {
      const deps = ipDeps({ env: { LOCAL_AUTH: 'off' } });
      const user = await createUser(deps, { passwordHash: hash });
      const s = await signIn(deps, { userId: user.id });
      const calls: Array<[string, unknown, Record<string, string>]> = [
        ['/api/v1/auth/login', { username: user.username, password: PASSWORD }, PANEL],
        ['/api/v1/auth/options', { email: mail() }, PANEL],
        ['/api/v1/auth/email/start', { email: mail() }, PANEL],
        ['/api/v1/auth/email/verify', { email: mail(), code: '123456' }, PANEL],
        ['/api/v1/auth/change-password', { current_password: PASSWORD, new_password: 'another secret' }, s.headers],
      ];
      for (const [path, body, headers] of calls) {
        const res = await app(deps).request(path, jsonRequest('POST', body, { ...headers, ...from() }));
        expect(res.status, path).toBe(403);
        expect((await errorOf(res)).code).toBe('local_auth_disabled');
      }
    });
  });

  describe('change-password', () => {
    it('changes the password, clears must_change_password and revokes the other sessions only', async () => {
      const deps = ipDeps();
      const user = await createUser(deps, { passwordHash: hash, mustChangePassword: true });
      const current = await signIn(deps, { userId: user.id });
      const other = await signIn(deps, { userId: user.id });
      const res = await app(deps).request(
        '/api/v1/auth/change-password',
        jsonRequest('POST', { current_password: PASSWORD, new_password: 'a new secret' }, current.headers),
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
      expect((await app(deps).request('/api/v1/me', { headers: current.headers })).status).toBe(200);
      expect((await app(deps).request('/api/v1/me', { headers: other.headers })).status).toBe(401);
      const [row] = await deps.database.db.select().from(users).where(eq(users.id, user.id));
      expect(row!.mustChangePassword).toBe(false);
      const login = await app(deps).request('/api/v1/auth/login', jsonRequest('POST', { username: user.username, password: 'a new secret' }, { ...PANEL, ...from() }));
      expect(login.status).toBe(200);
    });

    it('answers 400 for a short, long or unchanged password and 401 for a wrong current one', async () => {
      const deps = ipDeps();
      const user = await createUser(deps, { passwordHash: hash });
      const s = await signIn(deps, { userId: user.id });
      const cases: Array<[unknown, number, string]> = [
        [{ current_password: PASSWORD, new_password: 'short' }, 400, 'bad_request'],
        [{ current_password: PASSWORD, new_password: 'é'.repeat(37) }, 400, 'bad_request'], // 74 bytes
        [{ current_password: PASSWORD, new_password: PASSWORD }, 400, 'bad_request'],
        [{ current_password: 'not it at all', new_password: 'a fine password' }, 401, 'invalid_credentials'],
      ];
      for (const [body, status, code] of cases) {
        const res = await app(deps).request('/api/v1/auth/change-password', jsonRequest('POST', body, s.headers));
        expect(res.status, JSON.stringify(body)).toBe(status);
        expect((await errorOf(res)).code).toBe(code);
      }
      // 72 bytes exactly is accepted.
      const edge = await app(deps).request('/api/v1/auth/change-password', jsonRequest('POST', { current_password: PASSWORD, new_password: 'é'.repeat(36) }, s.headers));
      expect(edge.status).toBe(200);
    });
  });

  describe('sign-in options', () => {
    it('lists email_otp for a verified player address with mail, nothing for unknown, unverified or staff addresses', async () => {
      const deps = ipDeps({ overrides: { mail: smtp.adapter() } });
      const verified = mail();
      const unverified = mail();
      const staffMail = mail();
      await createUser(deps, { email: verified, emailVerified: true });
      await createUser(deps, { email: unverified });
      await createUser(deps, { email: staffMail, emailVerified: true, role: 'admin' });
      const ask = async (d: TestDeps, email: string) =>
        (await (await app(d).request('/api/v1/auth/options', jsonRequest('POST', { email }, { ...PANEL, ...from() }))).json()) as unknown;
      expect(await ask(deps, verified.toUpperCase())).toEqual({ methods: ['email_otp'] });
      expect(await ask(deps, unverified)).toEqual({ methods: [] });
      expect(await ask(deps, staffMail)).toEqual({ methods: [] });
      expect(await ask(deps, mail())).toEqual({ methods: [] });
      // Without a relay the code door is not offered.
      expect(await ask(ipDeps(), verified)).toEqual({ methods: [] });
    });
  });

  describe('e-mail sign-in door', () => {
    it('mails a code through real SMTP and signs in with it; the address becomes verified', async () => {
      const deps = ipDeps({ overrides: { mail: smtp.adapter() } });
      const email = mail();
      const user = await createUser(deps, { email });
      const ip = from();
      const start = await app(deps).request('/api/v1/auth/email/start', jsonRequest('POST', { email }, { ...PANEL, ...ip }));
      expect(start.status).toBe(202);
      expect(await start.json()).toEqual({ sent: true, expires_at: new Date(deps.clock.now().getTime() + 600_000).toISOString() });
      const code = smtp.lastCode(email)!;
      const verify = await app(deps).request('/api/v1/auth/email/verify', jsonRequest('POST', { email, code }, { ...PANEL, ...ip }));
      expect(verify.status).toBe(200);
      expect(await verify.json()).toEqual({ user_id: user.id, role: 'user' });
      const cookie = cookieFrom(verify);
      expect((await app(deps).request('/api/v1/me', { headers: { ...PANEL, Cookie: cookie } })).status).toBe(200);
      const [row] = await deps.database.db.select().from(users).where(eq(users.id, user.id));
      expect(row!.emailVerified).toBe(true);
      const replay = await app(deps).request('/api/v1/auth/email/verify', jsonRequest('POST', { email, code }, { ...PANEL, ...ip }));
      expect(replay.status).toBe(400);
      expect((await errorOf(replay)).code).toBe('invalid_code');
    });

    it('answers start identically for unknown, staff, disabled and cooling-down addresses, sending nothing', async () => {
      const deps = ipDeps({ overrides: { mail: smtp.adapter() } });
      const staffMail = mail();
      const disabledMail = mail();
      const cooling = mail();
      await createUser(deps, { email: staffMail, role: 'owner' });
      await createUser(deps, { email: disabledMail, disabled: true });
      await createUser(deps, { email: cooling });
      await app(deps).request('/api/v1/auth/email/start', jsonRequest('POST', { email: cooling }, { ...PANEL, ...from() }));
      const sentBefore = smtp.received.length;
      const answers = [];
      for (const email of [mail(), staffMail, disabledMail, cooling]) {
        const res = await app(deps).request('/api/v1/auth/email/start', jsonRequest('POST', { email }, { ...PANEL, ...from() }));
        answers.push({ status: res.status, body: await res.json() });
      }
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
      expect(answers[0]!.status).toBe(202);
      expect(smtp.received.length).toBe(sentBefore);
    });

    it('answers one 400 invalid_code for wrong, expired and locked codes, and 403 staff_account for staff', async () => {
      const deps = ipDeps({ overrides: { mail: smtp.adapter() } });
      const email = mail();
      await createUser(deps, { email });
      const ip = from();
      await app(deps).request('/api/v1/auth/email/start', jsonRequest('POST', { email }, { ...PANEL, ...ip }));
      const right = smtp.lastCode(email)!;
      const wrong = right === '999999' ? '888888' : '999999';
      const verify = (code: string, who = email) => app(deps).request('/api/v1/auth/email/verify', jsonRequest('POST', { email: who, code }, { ...PANEL, ...from() }));
      for (let i = 0; i < 5; i++) expect((await errorOf(await verify(wrong))).code).toBe('invalid_code');
      const locked = await verify(right);
      expect(locked.status).toBe(400);
      expect((await errorOf(locked)).code).toBe('invalid_code');
      expect((await errorOf(await verify('123456', mail()))).code).toBe('invalid_code');
      // Expired.
      deps.clock.advance(61_000);
      await app(deps).request('/api/v1/auth/email/start', jsonRequest('POST', { email }, { ...PANEL, ...from() }));
      deps.clock.advance(600_001);
      expect((await errorOf(await verify(smtp.lastCode(email)!))).code).toBe('invalid_code');
      const staffMail = mail();
      await createUser(deps, { email: staffMail, emailVerified: true, role: 'admin' });
      const staff = await verify('123456', staffMail);
      expect(staff.status).toBe(403);
      expect((await errorOf(staff)).code).toBe('staff_account');
    });

    it('locks the door of an account after 10 wrong codes in 24 hours', async () => {
      const deps = ipDeps({ overrides: { mail: smtp.adapter() } });
      const email = mail();
      await createUser(deps, { email });
      const start = () => app(deps).request('/api/v1/auth/email/start', jsonRequest('POST', { email }, { ...PANEL, ...from() }));
      const verify = (code: string) => app(deps).request('/api/v1/auth/email/verify', jsonRequest('POST', { email, code }, { ...PANEL, ...from() }));
      for (let round = 0; round < 2; round++) {
        await start();
        const wrong = smtp.lastCode(email) === '999999' ? '888888' : '999999';
        for (let i = 0; i < 5; i++) await verify(wrong);
        deps.clock.advance(61_000);
      }
      const sent = smtp.received.length;
      expect((await start()).status).toBe(202);
      expect(smtp.received.length).toBe(sent);
      deps.clock.advance(24 * 3600_000);
      await start();
      expect(smtp.received.length).toBe(sent + 1);
      expect((await verify(smtp.lastCode(email)!)).status).toBe(200);
    });

    it('answers mail_unavailable for every address without a relay, and mail_undeliverable when the relay refuses', async () => {
      const none = ipDeps();
      const known = mail();
      await createUser(none, { email: known });
      const answers = [];
      for (const email of [known, mail()]) {
        const res = await app(none).request('/api/v1/auth/email/start', jsonRequest('POST', { email }, { ...PANEL, ...from() }));
        const e = await errorOf(res);
        answers.push({ status: res.status, code: e.code, message: e.message });
      }
      expect(answers[0]).toEqual(answers[1]);
      expect(answers[0]).toMatchObject({ status: 503, code: 'mail_unavailable' });

      const deps = ipDeps({ overrides: { mail: smtp.adapter() } });
      const bounce = `bounce-${randomUUID()}@example.com`;
      await createUser(deps, { email: bounce });
      const res = await app(deps).request('/api/v1/auth/email/start', jsonRequest('POST', { email: bounce }, { ...PANEL, ...from() }));
      expect(res.status).toBe(502);
      const body = JSON.stringify(await res.json());
      expect(body).toContain('mail_undeliverable');
      expect(body).not.toMatch(/550|relay-internal|unknown/);
    });
  });

  describe('door rate limit', () => {
    it('is shared by two app instances on one database, per address, with Retry-After', async () => {
      // On PostgreSQL the second instance gets its own connection pool, as a second replica would.
      const second = await secondHandle(database());
      expect(second !== undefined).toBe(database().kind === 'postgres');
      const one = ipDeps();
      const two = createTestDeps(second ?? database(), { env: { CLIENT_IP_HEADER: 'x-real-ip' } });
      onTestFinished(async () => {
        await second?.close();
      });
      const a = app(one);
      const b = app(two);
      const ip = from();
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) {
        const res = await (i % 2 === 0 ? a : b).request('/api/v1/auth/options', jsonRequest('POST', { email: mail() }, { ...PANEL, ...ip }));
        statuses.push(res.status);
        if (res.status === 429) {
          expect((await errorOf(res)).code).toBe('rate_limited');
          expect(res.headers.get('retry-after')).toBe('3');
        }
      }
      expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
      expect(statuses[20]).toBe(429);
      // Another address is not held; the same address is free again once tokens refill.
      expect((await a.request('/api/v1/auth/options', jsonRequest('POST', { email: mail() }, { ...PANEL, ...from() }))).status).toBe(200);
      one.clock.advance(3000);
      expect((await a.request('/api/v1/auth/options', jsonRequest('POST', { email: mail() }, { ...PANEL, ...ip }))).status).toBe(200);
      // Replicas share one time: a clock 3 s behind on one instance would (rightly) see a refill.
      two.clock.advance(3000);
      // 40 requests at once from one address, half through each instance: exactly the burst passes.
      const burst = from();
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).request('/api/v1/auth/options', jsonRequest('POST', { email: mail() }, { ...PANEL, ...burst }))),
      );
      expect(answers.filter((r) => r.status === 200)).toHaveLength(20);
      expect(answers.filter((r) => r.status === 429)).toHaveLength(20);
    });

    it('counts IPv6 clients per /64 and bad bodies too', async () => {
      const deps = ipDeps();
      const prefix = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:1`;
      for (let i = 0; i < 20; i++) {
        const res = await app(deps).request('/api/v1/auth/login', jsonRequest('POST', '{bad json', { ...PANEL, 'x-real-ip': `${prefix}::${i.toString(16)}` }));
        expect(res.status).toBe(400);
      }
      const res = await app(deps).request('/api/v1/auth/login', jsonRequest('POST', { username: 'a', password: 'b' }, { ...PANEL, 'x-real-ip': `${prefix}:ffff:ffff:ffff:ffff` }));
      expect(res.status).toBe(429);
    });
  });
});
