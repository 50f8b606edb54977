import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';
import { linkedAccounts, users } from '../../db/schema/accounts.js';
import { auditLog } from '../../db/schema/index.js';
import type { PasskeyDirectory } from './parts.js';

describe('admin: the user list, edits, sign-out, passkeys and links', () => {
  const database = useTestDatabase();
  const app = (deps: TestDeps) => createTestApps(deps).external;
  const owner = async (deps: TestDeps) => {
    const user = await createUser(deps, { role: 'owner' });
    return { id: user.id, headers: (await signIn(deps, { userId: user.id })).headers };
  };
  const get = async (deps: TestDeps, path: string, headers: Record<string, string>) => {
    const res = await app(deps).request(path, { headers });
    expect(res.status, path).toBe(200);
    return (await res.json()) as { users: Array<{ id: string; username: string }>; total: number };
  };

  it('filters by text, role and disabled, pages with limit and offset, and counts every match in total', async () => {
    const deps = createTestDeps(database());
    const o = await owner(deps);
    const tag = `q${randomUUID().slice(0, 6)}`;
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await createUser(deps, { username: `${tag}_${i}`, disabled: i === 4 }));
      deps.clock.advance(1000);
    }
    await createUser(deps, { username: `other_${tag.toUpperCase()}x`, email: `${tag}@example.com`, role: 'admin' });
    const all = await get(deps, `/api/v1/users?query=${tag.toUpperCase()}`, o.headers);
    expect(all.total).toBe(6);
    const page = await get(deps, `/api/v1/users?query=${tag}&role=user&limit=2&offset=1`, o.headers);
    expect(page).toMatchObject({ total: 5 });
    expect(page.users.map((u) => u.username)).toEqual([`${tag}_1`, `${tag}_2`]);
    expect((await get(deps, `/api/v1/users?query=${tag}&disabled=true`, o.headers)).users.map((u) => u.id)).toEqual([made[4]!.id]);
    expect((await get(deps, `/api/v1/users?query=${tag}&role=admin`, o.headers)).total).toBe(1);
    // `%` and `_` are matched as typed.
    expect((await get(deps, `/api/v1/users?query=${encodeURIComponent('%')}`, o.headers)).total).toBe(0);
    for (const query of ['limit=0', 'limit=201', 'offset=-1', 'role=god', 'disabled=maybe', 'surprise=1']) {
      const res = await app(deps).request(`/api/v1/users?${query}`, { headers: o.headers });
      expect(res.status, query).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
  });

  it('renames and readdresses a user (a new address is unverified), 409 for a taken name', async () => {
    const deps = createTestDeps(database());
    const o = await owner(deps);
    const user = await createUser(deps, { email: `v-${randomUUID()}@example.com`, emailVerified: true });
    const name = `renamed_${randomUUID().slice(0, 6)}`;
    const email = `n-${randomUUID()}@example.com`;
    const res = await app(deps).request(`/api/v1/users/${user.id}`, jsonRequest('PATCH', { username: name, email: email.toUpperCase() }, o.headers));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: user.id, username: name, email, email_verified: false });
    const cleared = await app(deps).request(`/api/v1/users/${user.id}`, jsonRequest('PATCH', { email: null }, o.headers));
    expect(await cleared.json()).not.toHaveProperty('email');
    const taken = await createUser(deps);
    const clash = await app(deps).request(`/api/v1/users/${user.id}`, jsonRequest('PATCH', { username: taken.username.toUpperCase() }, o.headers));
    expect(clash.status).toBe(409);
    expect((await errorOf(clash)).code).toBe('conflict');
  });

  it('signs a user out everywhere, and removes every passkey through the passkey feature', async () => {
    const removed: string[] = [];
    const passkeys: PasskeyDirectory = { count: async () => 0, removeAll: async (_db, userId) => (removed.push(userId), 2), hasAny: () => sql<boolean>`false` };
    const deps = createTestDeps(database(), { overrides: { passkeys } });
    const o = await owner(deps);
    const user = await createUser(deps);
    const s1 = await signIn(deps, { userId: user.id });
    const s2 = await signIn(deps, { userId: user.id });
    const out = await app(deps).request(`/api/v1/users/${user.id}/sessions`, { method: 'DELETE', headers: o.headers });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ ok: true });
    for (const s of [s1, s2]) expect((await app(deps).request('/api/v1/me', { headers: s.headers })).status).toBe(401);
    const keys = await app(deps).request(`/api/v1/users/${user.id}/passkeys`, { method: 'DELETE', headers: o.headers });
    expect(await keys.json()).toEqual({ ok: true });
    expect(removed).toEqual([user.id]);
    expect((await app(deps).request(`/api/v1/users/${randomUUID()}/sessions`, { method: 'DELETE', headers: o.headers })).status).toBe(404);
    // An admin may not sign out an owner.
    const admin = await createUser(deps, { role: 'admin' });
    const byAdmin = await app(deps).request(`/api/v1/users/${o.id}/sessions`, { method: 'DELETE', headers: (await signIn(deps, { userId: admin.id })).headers });
    expect(byAdmin.status).toBe(403);
  });

  it('links and unlinks a game identity as an owner only; the same link again is 200 with no change, one linked elsewhere 409', async () => {
    const deps = createTestDeps(database());
    const o = await owner(deps);
    const user = await createUser(deps);
    const uuid = randomUUID();
    const path = `/api/v1/users/${user.id}/links`;
    const res = await app(deps).request(path, jsonRequest('POST', { mc_uuid: uuid.replaceAll('-', '').toUpperCase(), auth_source: 'primary' }, o.headers));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, mc_uuid: uuid, auth_source: 'primary' });
    // The same identity to the same account again: 200 with no change (no second audit row).
    const again = await app(deps).request(path, jsonRequest('POST', { mc_uuid: uuid, auth_source: 'thirdparty' }, o.headers));
    expect([again.status, await again.json()]).toEqual([200, { ok: true, mc_uuid: uuid, auth_source: 'primary' }]);
    expect(await deps.database.db.select().from(linkedAccounts).where(eq(linkedAccounts.mcUuid, uuid))).toMatchObject([{ userId: user.id, authSource: 'primary' }]);
    expect(await deps.database.db.select().from(auditLog).where(and(eq(auditLog.action, 'link.add'), eq(auditLog.target, user.id)))).toHaveLength(1);
    const other = await createUser(deps);
    const clash = await app(deps).request(`/api/v1/users/${other.id}/links`, jsonRequest('POST', { mc_uuid: uuid, auth_source: 'primary' }, o.headers));
    expect(clash.status).toBe(409);
    const admin = await createUser(deps, { role: 'admin' });
    const adminHeaders = (await signIn(deps, { userId: admin.id })).headers;
    expect((await app(deps).request(`${path}/${uuid}`, { method: 'DELETE', headers: adminHeaders })).status).toBe(403);
    const unlink = await app(deps).request(`${path}/${uuid}`, { method: 'DELETE', headers: o.headers });
    expect(await unlink.json()).toEqual({ ok: true, mc_uuid: uuid });
    expect(await deps.database.db.select().from(linkedAccounts).where(eq(linkedAccounts.mcUuid, uuid))).toEqual([]);
    expect((await app(deps).request(`${path}/${uuid}`, { method: 'DELETE', headers: o.headers })).status).toBe(404);
    await linkAccount(deps, { userId: other.id, mcUuid: randomUUID() });
    for (const body of [{ mc_uuid: 'nope', auth_source: 'primary' }, { mc_uuid: uuid, auth_source: 'elsewhere' }, { mc_uuid: uuid }]) {
      expect((await app(deps).request(path, jsonRequest('POST', body, o.headers))).status).toBe(400);
    }
  });

  it("takes the panel's default auth_source mojang as the primary, and a configured source tag as a third-party link", async () => {
    const deps = createTestDeps(database(), {
      env: {
        SESSION_SOURCES: JSON.stringify([
          { name: 'mojang', url: 'https://sessionserver.example', primary: true },
          { name: 'littleskin', url: 'https://littleskin.example/sessionserver', prefix: 'LS' },
        ]),
      },
    });
    const o = await owner(deps);
    const user = await createUser(deps);
    const path = `/api/v1/users/${user.id}/links`;
    const mojang = randomUUID();
    const res = await app(deps).request(path, jsonRequest('POST', { mc_uuid: mojang, auth_source: 'mojang' }, o.headers));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, mc_uuid: mojang, auth_source: 'primary' });
    const tagged = randomUUID();
    const third = await app(deps).request(path, jsonRequest('POST', { mc_uuid: tagged, auth_source: 'littleskin' }, o.headers));
    expect(await third.json()).toEqual({ ok: true, mc_uuid: tagged, auth_source: 'thirdparty' });
    const rows = await deps.database.db.select({ mcUuid: linkedAccounts.mcUuid, authSource: linkedAccounts.authSource }).from(linkedAccounts).where(eq(linkedAccounts.userId, user.id));
    expect(rows.sort((a, b) => a.mcUuid.localeCompare(b.mcUuid))).toEqual(
      [{ mcUuid: mojang, authSource: 'primary' }, { mcUuid: tagged, authSource: 'thirdparty' }].sort((a, b) => a.mcUuid.localeCompare(b.mcUuid)),
    );
  });
});

describe('the account itself: revoke-others, an address in setup, a password that must change', () => {
  const database = useTestDatabase();
  const app = (deps: TestDeps) => createTestApps(deps).external;

  it('revokes every other session of mine and counts them', async () => {
    const deps = createTestDeps(database());
    const user = await createUser(deps);
    const [me, a, b] = [await signIn(deps, { userId: user.id }), await signIn(deps, { userId: user.id }), await signIn(deps, { userId: user.id })];
    const res = await app(deps).request('/api/v1/account/sessions/revoke-others', { method: 'POST', headers: me.headers });
    expect(await res.json()).toEqual({ revoked: 2 });
    expect((await app(deps).request('/api/v1/me', { headers: me.headers })).status).toBe(200);
    for (const s of [a, b]) expect((await app(deps).request('/api/v1/me', { headers: s.headers })).status).toBe(401);
  });

  it('records an address unverified during setup, and refuses another account’s address', async () => {
    const deps = createTestDeps(database());
    const user = await createUser(deps, { role: 'owner', inSetup: true });
    const s = await signIn(deps, { userId: user.id, method: 'setup_token' });
    const email = `s-${randomUUID()}@example.com`;
    const res = await app(deps).request('/api/v1/account/email', jsonRequest('POST', { email: email.toUpperCase() }, s.headers));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ email });
    const [row] = await deps.database.db.select().from(users).where(eq(users.id, user.id));
    expect(row).toMatchObject({ email, emailVerified: false, inSetup: true });
    const holder = await createUser(deps, { email: `h-${randomUUID()}@example.com` });
    const [held] = await deps.database.db.select().from(users).where(eq(users.id, holder.id));
    const clash = await app(deps).request('/api/v1/account/email', jsonRequest('POST', { email: held!.email }, s.headers));
    expect(clash.status).toBe(409);
  });

  it('lets a session whose password must change only read /me, change the password and sign out', async () => {
    const deps = createTestDeps(database());
    const user = await createUser(deps, { mustChangePassword: true });
    const s = await signIn(deps, { userId: user.id });
    expect((await app(deps).request('/api/v1/me', { headers: s.headers })).status).toBe(200);
    for (const [method, path] of [['GET', '/api/v1/account/sessions'], ['GET', '/api/v1/me/servers'], ['POST', '/api/v1/account/sessions/revoke-others']]) {
      const res = await app(deps).request(path!, { method: method!, headers: s.headers });
      expect(res.status, path).toBe(403);
      expect((await errorOf(res)).code).toBe('password_change_required');
    }
    // change-password itself is reached (it answers about the password, not the gate).
    const change = await app(deps).request('/api/v1/auth/change-password', jsonRequest('POST', { current_password: 'whatever1', new_password: 'another one' }, s.headers));
    expect(change.status).toBe(401);
    expect((await errorOf(change)).code).toBe('invalid_credentials');
    expect((await app(deps).request('/api/v1/auth/logout', { method: 'POST', headers: s.headers })).status).toBe(200);
  });
});
