import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser } from '../../../test/helpers/sessions.js';
import { users } from '../../db/schema/accounts.js';
import { setupTokens } from '../../db/schema/auth.js';
import { sha256Hex } from '../../lib/secrets.js';
import { ensureSetupToken, mintSetupToken, setupOnStart } from './setup-token.js';

const CONSOLE = { Host: 'console.felis.test' };

describe('first-run setup', () => {
  const database = useTestDatabase();
  const app = (deps: TestDeps) => createTestApps(deps).external;
  // Each test starts from a database without owners or tokens (tests of this file run in order).
  beforeEach(async () => {
    const db = database().db;
    await db.delete(setupTokens);
    await db.delete(users);
  });
  const claim = (deps: TestDeps, body: unknown) => app(deps).request('/api/v1/auth/setup/redeem', jsonRequest('POST', body, { ...CONSOLE, 'x-real-ip': `10.9.${Math.floor(Math.random() * 255)}.1` }));
  const deps = (env: Record<string, string> = {}) => createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-real-ip', ...env } });

  it('mints a token on start, logs it once, and turns it into the owner and a setup-lockdown session', async () => {
    const d = deps();
    const hint = await setupOnStart(d, { externalPort: 8080 });
    const logged = d.captured.lines().filter((l) => typeof l.setup_token === 'string');
    expect(logged).toHaveLength(1);
    const token = logged[0]!.setup_token as string;
    // The exact command to paste: the redeem on the console host, on the port listened on.
    const redeem = `SESSION=$(curl -s -D - -o /dev/stderr -H 'Host: console.felis.test' -H 'Content-Type: application/json' -d '{"token":"${token}"}' http://127.0.0.1:8080/api/v1/auth/setup/redeem | grep -io 'svc_session=[^;]*')`;
    expect(logged[0]!.next).toBe(redeem);
    expect(hint).toContain(`\n  ${redeem}\n`);
    expect(hint).toContain('adding a passkey');
    const [stored] = await d.database.db.select().from(setupTokens);
    expect(stored!.tokenHash).toBe(sha256Hex(token));
    expect(stored!.expiresAt.getTime() - d.clock.now().getTime()).toBe(3600_000);
    // A restart keeps the live token and does not log a new one.
    await setupOnStart(d, { externalPort: 8080 });
    expect(d.captured.lines().filter((l) => typeof l.setup_token === 'string')).toHaveLength(1);
    expect(logged[0]!.msg).toContain('POST /api/v1/auth/setup/redeem');

    expect(await (await app(d).request('/api/v1/auth/owner-status', { headers: CONSOLE })).json()).toEqual({ owner_bound: false });
    const res = await claim(d, { token, username: 'founder', email: 'Founder@Example.com' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { user_id: string; role: string };
    const state = {
      user_id: body.user_id,
      username: 'founder',
      role: 'owner',
      email: 'founder@example.com',
      email_verified: false,
      has_passkey: false,
      setup_required: true,
    };
    expect(body).toEqual(state);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const status = await app(d).request('/api/v1/auth/setup/status', { headers: { ...CONSOLE, Cookie: cookie } });
    expect(status.status).toBe(200);
    expect(await status.json()).toEqual(state);
    expect(await (await app(d).request('/api/v1/auth/owner-status', { headers: CONSOLE })).json()).toEqual({ owner_bound: true });
    const me = await app(d).request('/api/v1/me', { headers: { ...CONSOLE, Cookie: cookie } });
    expect(await me.json()).toMatchObject({ user_id: body.user_id, is_owner: true, setup_required: true, email: 'founder@example.com', email_verified: false });
    const users = await app(d).request('/api/v1/users', { headers: { ...CONSOLE, Cookie: cookie } });
    expect(users.status).toBe(403);
    expect((await errorOf(users)).code).toBe('setup_required');

    // Single use.
    const again = await claim(d, { token, username: 'second' });
    expect(again.status).toBe(400);
    expect((await errorOf(again)).code).toBe('setup_token_invalid');
    // The retired door is gone.
    expect((await app(d).request('/api/v1/setup/claim', jsonRequest('POST', { token }, CONSOLE))).status).toBe(404);
    // Once an owner exists nothing more is minted.
    expect(await ensureSetupToken(d, undefined)).toEqual({ kind: 'owner_exists' });
    expect(await mintSetupToken(d)).toBeUndefined();
  });

  it('repeats the hint on later starts while no owner exists, and warns when no console host would let the owner administer', async () => {
    const d = deps({ MAIL_TRANSPORT: 'log' });
    await setupOnStart(d, { externalPort: 8080 });
    const later = await setupOnStart(d, { externalPort: 8080 });
    expect(later).toContain('no owner yet. The setup token shown at the first start works until');
    expect(later).toContain(`-d '{"token":"<setup token>"}'`);
    expect(later).toContain('/api/v1/account/email/start');
    expect(later).toContain('the code is written to this log');
    const none = deps({ CONSOLE_HOST: '' });
    expect(await setupOnStart(none, { externalPort: 8080 })).toBeUndefined();
    expect(none.captured.lines().some((l) => String(l.msg).startsWith('CONSOLE_HOST is unset'))).toBe(true);
    // Local names resolve by themselves: no Host header, the name in the URL.
    const local = deps({ CONSOLE_HOST: 'console.localhost', MAIL_TRANSPORT: 'log' });
    expect(await setupOnStart(local, { externalPort: 9000 })).toContain("-d '{\"token\":\"<setup token>\"}' http://console.localhost:9000/api/v1/auth/setup/redeem");
  });

  it('refuses a wrong or expired token with 400, and a taken username with 409', async () => {
    const d = deps();
    const minted = (await mintSetupToken(d))!;
    expect((await errorOf(await claim(d, { token: 'x'.repeat(32), username: 'founder' }))).code).toBe('setup_token_invalid');
    // A claim that fails on a taken username rolls back: the token stays live.
    await createUser(d, { username: 'taken' });
    const taken = await claim(d, { token: minted.token, username: 'TAKEN' });
    expect(taken.status).toBe(409);
    expect((await errorOf(taken)).code).toBe('conflict');
    d.clock.advance(3600_001);
    const late = await claim(d, { token: minted.token, username: 'founder' });
    expect(late.status).toBe(400);
    expect((await errorOf(late)).code).toBe('setup_token_invalid');
  });

  it('takes SETUP_TOKEN from the environment instead of minting', async () => {
    const preset = `preset-${randomUUID()}`;
    const d = deps({ SETUP_TOKEN: preset });
    await setupOnStart(d, { externalPort: 8080 });
    expect(d.captured.lines().some((l) => typeof l.setup_token === 'string')).toBe(false);
    // Without a username the owner is called `owner`.
    const res = await claim(d, { token: preset });
    expect(res.status).toBe(200);
    const [owner] = await d.database.db.select().from(users).where(eq(users.username, 'owner'));
    expect(owner).toMatchObject({ role: 'owner', inSetup: true });
  });

  it('answers 400 for bad bodies and a bad username', async () => {
    const d = deps();
    const minted = (await mintSetupToken(d))!;
    for (const body of [{}, { token: '' }, { token: minted.token, username: 'a' }, { token: minted.token, username: 'ok_name', email: 'nope' }, { token: minted.token, username: 'ok_name', extra: 1 }]) {
      const res = await claim(d, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    // Still unspent.
    expect((await claim(d, { token: minted.token, username: 'ok_name' })).status).toBe(200);
  });

  it('a new minted token replaces the live one', async () => {
    const d = deps();
    const first = (await mintSetupToken(d))!;
    const second = (await mintSetupToken(d))!;
    expect((await claim(d, { token: first.token, username: 'first' })).status).toBe(400);
    expect((await claim(d, { token: second.token, username: 'second' })).status).toBe(200);
  });

  // A cold start under tsx took over 60 s at load 12-20 (the whole suite's run in docs/notes/suite-time.md).
  it('`felis setup-token` mints a token against a configured database', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'felis-setup-'));
    try {
      const run = () =>
        promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/felis.ts', 'setup-token'], {
          env: { ...process.env, DATABASE_URL: '', DATA_DIR: dir, LOG_LEVEL: 'silent' },
        });
      const { stdout } = await run();
      const token = stdout.split('\n')[1]!;
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(stdout).toContain('POST /api/v1/auth/setup/redeem');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
