import { and, eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { auditLog } from '../../db/schema/audit.js';
import { sessions, users } from '../../db/schema/accounts.js';
import { setupTokens } from '../../db/schema/auth.js';
import { sha256Hex } from '../../lib/secrets.js';
import { mintOwnerRecoveryToken, type OwnerRecovery } from './owner-recovery.js';
import { ensureSetupToken, setupOnStart } from './setup-token.js';

const CONSOLE = { Host: 'console.felis.test' };
const BY = { actor: 'cli:operator', ranOn: 'db-host' };

describe('lost-owner recovery', () => {
  const database = useTestDatabase();
  beforeEach(async () => {
    const db = database().db;
    await db.delete(setupTokens);
    await db.delete(sessions);
    await db.delete(auditLog);
    await db.delete(users);
  });
  const deps = () => createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-real-ip' } });
  const app = (d: TestDeps) => createTestApps(d).external;
  let ip = 0;
  const redeem = (d: TestDeps, body: unknown) =>
    app(d).request('/api/v1/auth/setup/redeem', jsonRequest('POST', body, { ...CONSOLE, 'x-real-ip': `10.8.${ip++ % 250}.1` }));
  const recovery = (result: OwnerRecovery) => {
    expect(result.kind).toBe('recovery');
    return result as Extract<OwnerRecovery, { kind: 'recovery' }>;
  };

  it('signs in as the same owner, ends its other sessions, locks it down until a new way in, and audits both steps', async () => {
    const d = deps();
    const owner = await createUser(d, { role: 'owner', username: 'founder', email: 'lost@example.com', emailVerified: true });
    const before = await signIn(d, { userId: owner.id });
    const other = await signIn(d, { userId: owner.id });
    const player = await createUser(d);
    const playerSession = await signIn(d, { userId: player.id });

    const minted = recovery(await mintOwnerRecoveryToken(d, BY));
    expect(minted.owner).toEqual({ id: owner.id, username: 'founder' });
    expect(minted.expiresAt.getTime() - d.clock.now().getTime()).toBe(3600_000);
    const [stored] = await d.database.db.select().from(setupTokens);
    expect(stored).toMatchObject({ tokenHash: sha256Hex(minted.token), ownerId: owner.id, usedAt: null });
    // Only the hash is kept; minting alone signs nobody out.
    expect(JSON.stringify(stored)).not.toContain(minted.token);
    expect((await app(d).request('/api/v1/me', { headers: before.headers })).status).toBe(200);

    const res = await redeem(d, { token: minted.token });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      user_id: owner.id,
      username: 'founder',
      role: 'owner',
      email: 'lost@example.com',
      email_verified: true,
      has_passkey: false,
      setup_required: true,
    });
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const session = { ...CONSOLE, Cookie: cookie };
    // The owner's earlier sessions are over; a player's are not.
    for (const old of [before, other]) expect((await app(d).request('/api/v1/me', { headers: old.headers })).status).toBe(401);
    expect((await app(d).request('/api/v1/me', { headers: playerSession.headers })).status).toBe(200);
    // Setup lockdown: the account's setup doors only, until a durable way in exists.
    expect(await (await app(d).request('/api/v1/me', { headers: session })).json()).toMatchObject({ user_id: owner.id, is_owner: true, setup_required: true });
    const users403 = await app(d).request('/api/v1/users', { headers: session });
    expect(users403.status).toBe(403);
    expect((await errorOf(users403)).code).toBe('setup_required');
    // One owner still, the same row.
    expect((await d.database.db.select().from(users).where(eq(users.role, 'owner'))).map((u) => u.id)).toEqual([owner.id]);

    const audit = await d.database.db.select().from(auditLog).where(eq(auditLog.target, owner.id));
    expect(audit.map((a) => a.action).sort()).toEqual(['setup.recover', 'setup.recovery_token']);
    expect(audit.find((a) => a.action === 'setup.recovery_token')).toMatchObject({ actor: 'cli:operator', detail: { username: 'founder', ran_on: 'db-host' } });
    expect(audit.find((a) => a.action === 'setup.recover')).toMatchObject({ actor: owner.id, detail: { sessions_revoked: 2 } });

    // Single use.
    const again = await redeem(d, { token: minted.token });
    expect(again.status).toBe(400);
    expect((await errorOf(again)).code).toBe('setup_token_invalid');
  });

  it('ends the lockdown with a verified e-mail address: the owner administers on the console host again', async () => {
    const d = createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-real-ip', MAIL_TRANSPORT: 'log' } });
    await createUser(d, { role: 'owner', username: 'founder' });
    const { token } = recovery(await mintOwnerRecoveryToken(d, BY));
    const res = await redeem(d, { token });
    const session = { ...CONSOLE, Cookie: res.headers.get('set-cookie')!.split(';')[0]! };
    expect((await app(d).request('/api/v1/users', { headers: session })).status).toBe(403);
    const start = await app(d).request('/api/v1/account/email/start', jsonRequest('POST', { email: 'new@example.com' }, session));
    expect(start.status).toBe(202);
    // The log transport writes the code where the README's first steps read it.
    const mailed = d.captured.lines().find((l) => l.mail_to === 'new@example.com');
    const code = /Your Felis code is (\d+)/.exec(String(mailed?.mail_text))![1]!;
    const verify = await app(d).request('/api/v1/account/email/verify', jsonRequest('POST', { code }, session));
    expect(verify.status).toBe(200);
    expect((await app(d).request('/api/v1/users', { headers: session })).status).toBe(200);
  });

  it('refuses a username or e-mail with a recovery token and keeps the token unspent', async () => {
    const d = deps();
    await createUser(d, { role: 'owner' });
    const { token } = recovery(await mintOwnerRecoveryToken(d, BY));
    for (const body of [{ token, username: 'someone' }, { token, email: 'a@example.com' }]) {
      const res = await redeem(d, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    expect((await redeem(d, { token })).status).toBe(200);
  });

  it('answers setup_token_invalid for an expired token, and for an owner demoted, disabled or deleted since', async () => {
    const d = deps();
    const owner = await createUser(d, { role: 'owner' });
    const expired = recovery(await mintOwnerRecoveryToken(d, BY));
    d.clock.advance(3600_001);
    expect((await errorOf(await redeem(d, { token: expired.token }))).code).toBe('setup_token_invalid');
    for (const change of [{ role: 'admin' as const }, { disabled: true }, { deletedAt: d.clock.now() }]) {
      await d.database.db.update(users).set({ role: 'owner', disabled: false, deletedAt: null }).where(eq(users.id, owner.id));
      const { token } = recovery(await mintOwnerRecoveryToken(d, BY));
      await d.database.db.update(users).set(change).where(eq(users.id, owner.id));
      const res = await redeem(d, { token });
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect((await errorOf(res)).code).toBe('setup_token_invalid');
    }
  });

  it('asks which owner when there are several, refuses an unknown or disabled one, and names the owners', async () => {
    const d = deps();
    await createUser(d, { role: 'owner', username: 'alpha' });
    d.clock.advance(1000);
    await createUser(d, { role: 'owner', username: 'beta', disabled: true });
    expect(await mintOwnerRecoveryToken(d, BY)).toEqual({ kind: 'choose', owners: ['alpha', 'beta'] });
    expect(await mintOwnerRecoveryToken(d, { ...BY, username: 'gamma' })).toEqual({ kind: 'unknown_owner', owners: ['alpha', 'beta'] });
    expect(await mintOwnerRecoveryToken(d, { ...BY, username: 'Beta' })).toEqual({ kind: 'disabled', owner: 'beta', owners: ['alpha', 'beta'] });
    expect(recovery(await mintOwnerRecoveryToken(d, { ...BY, username: 'ALPHA' })).owner.username).toBe('alpha');
    // Nothing minted for the refusals, one audit row for the one token.
    expect(await d.database.db.select().from(setupTokens)).toHaveLength(1);
    expect(await d.database.db.select().from(auditLog).where(eq(auditLog.action, 'setup.recovery_token'))).toHaveLength(1);
  });

  it('with no owner yet, mints the first-run token, which creates the owner', async () => {
    const d = deps();
    const first = await mintOwnerRecoveryToken(d, BY);
    expect(first.kind).toBe('first_run');
    const res = await redeem(d, { token: (first as { token: string }).token, username: 'founder' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ username: 'founder', role: 'owner', setup_required: true });
  });

  it('a newer recovery token replaces the live one; a start-up neither logs nor counts a recovery token as the first-run token', async () => {
    const d = deps();
    const owner = await createUser(d, { role: 'owner' });
    const first = recovery(await mintOwnerRecoveryToken(d, BY));
    const second = recovery(await mintOwnerRecoveryToken(d, BY));
    expect((await errorOf(await redeem(d, { token: first.token }))).code).toBe('setup_token_invalid');
    // The owner goes away with a recovery token live: the next start mints a first-run token.
    await d.database.db.update(users).set({ deletedAt: d.clock.now() }).where(eq(users.id, owner.id));
    const ensured = await ensureSetupToken(d, undefined);
    expect(ensured.kind).toBe('minted');
    expect((await errorOf(await redeem(d, { token: second.token }))).code).toBe('setup_token_invalid');
  });

  it('repeats the hint on a later start while the owner is still in setup, and says nothing once it is out', async () => {
    const d = deps();
    const owner = await createUser(d, { role: 'owner', username: 'founder', inSetup: true });
    const hint = await setupOnStart(d, { externalPort: 8080 });
    expect(hint).toContain('the owner "founder" is still in setup lockdown');
    expect(hint).toContain('npm run recover-owner');
    expect(d.captured.lines().some((l) => l.owner === 'founder' && String(l.msg).includes('setup lockdown'))).toBe(true);
    await d.database.db.update(users).set({ inSetup: false }).where(and(eq(users.id, owner.id)));
    expect(await setupOnStart(d, { externalPort: 8080 })).toBeUndefined();
  });
});
