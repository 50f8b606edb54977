import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';
import { auditLog } from '../../db/schema/audit.js';

describe('admin: users, quotas, sessions', () => {
  const database = useTestDatabase();
  const app = (deps: TestDeps) => createTestApps(deps).external;
  const staff = async (deps: TestDeps, role: 'owner' | 'admin' = 'owner') => {
    const user = await createUser(deps, { role });
    return { ...user, ...(await signIn(deps, { userId: user.id })) };
  };
  const auditOf = (deps: TestDeps, target: string, action: string) =>
    deps.database.db.select().from(auditLog).where(and(eq(auditLog.target, target), eq(auditLog.action, action)));

  it('creates users and lists them with server counts from the servers feature', async () => {
    const deps = createTestDeps(database(), {
      overrides: { serverCounts: async (_db, ids) => new Map(ids.map((id) => [id, 2])) },
    });
    const owner = await staff(deps);
    const email = `New-${randomUUID()}@Example.com`;
    const username = `new_${randomUUID().slice(0, 8)}`;
    const res = await app(deps).request('/api/v1/users', jsonRequest('POST', { username, email, role: 'user' }, owner.headers));
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    expect(created).toEqual({
      id: expect.any(String),
      username,
      email: email.toLowerCase(),
      role: 'user',
      disabled: false,
      email_verified: false,
      server_count: 2,
      created_at: deps.clock.now().toISOString(),
      updated_at: deps.clock.now().toISOString(),
    });
    const list = (await (await app(deps).request('/api/v1/users', { headers: owner.headers })).json()) as { users: Array<{ id: string }> };
    expect(list.users.map((u) => u.id)).toEqual(expect.arrayContaining([created.id, owner.id]));
    expect((await auditOf(deps, created.id as string, 'user.create')).length).toBe(1);
  });

  it('answers 409 for a taken username or e-mail, whatever their case', async () => {
    const deps = createTestDeps(database());
    const owner = await staff(deps);
    const email = `t-${randomUUID()}@example.com`;
    const other = await createUser(deps, { email });
    for (const body of [
      { username: other.username.toUpperCase(), role: 'user' },
      { username: `x_${randomUUID().slice(0, 8)}`, email: email.toUpperCase(), role: 'user' },
    ]) {
      const res = await app(deps).request('/api/v1/users', jsonRequest('POST', body, owner.headers));
      expect(res.status).toBe(409);
      expect((await errorOf(res)).code).toBe('conflict');
    }
  });

  it('lets only an owner create or promote staff', async () => {
    const deps = createTestDeps(database());
    const admin = await staff(deps, 'admin');
    const res = await app(deps).request('/api/v1/users', jsonRequest('POST', { username: `a_${randomUUID().slice(0, 8)}`, role: 'admin' }, admin.headers));
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('forbidden');
    const player = await createUser(deps);
    const promote = await app(deps).request(`/api/v1/users/${player.id}`, jsonRequest('PATCH', { role: 'admin' }, admin.headers));
    expect(promote.status).toBe(403);
    const owner = await staff(deps);
    const ok = await app(deps).request(`/api/v1/users/${player.id}`, jsonRequest('PATCH', { role: 'admin' }, owner.headers));
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { role: string }).role).toBe('admin');
    const [row] = await auditOf(deps, player.id, 'user.update');
    expect(row).toMatchObject({ actor: owner.id, detail: { role: { from: 'user', to: 'admin' } } });
  });

  it('shows a user in detail with linked accounts, and 404 for an unknown id', async () => {
    const deps = createTestDeps(database());
    const owner = await staff(deps);
    const user = await createUser(deps);
    const mcUuid = randomUUID();
    await linkAccount(deps, { userId: user.id, mcUuid, authSource: 'thirdparty' });
    const res = await app(deps).request(`/api/v1/users/${user.id}`, { headers: owner.headers });
    expect(res.status).toBe(200);
    const detail = (await res.json()) as Record<string, unknown>;
    expect(detail.linked_accounts).toEqual([{ mc_uuid: mcUuid, auth_source: 'thirdparty', verified_at: deps.clock.now().toISOString() }]);
    expect(detail).not.toHaveProperty('deleted_at');
    expect(detail).not.toHaveProperty('email');
    const missing = await app(deps).request(`/api/v1/users/${randomUUID()}`, { headers: owner.headers });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).code).toBe('not_found');
    expect((await app(deps).request('/api/v1/users/not-a-uuid', { headers: owner.headers })).status).toBe(400);
  });

  it('disables a user: their sessions stop at once and the change is audited; enabling lets them sign in again', async () => {
    const deps = createTestDeps(database());
    const owner = await staff(deps);
    const user = await createUser(deps);
    const s = await signIn(deps, { userId: user.id });
    const res = await app(deps).request(`/api/v1/users/${user.id}/disable`, jsonRequest('POST', { disabled: true }, owner.headers));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: user.id, disabled: true });
    expect((await app(deps).request('/api/v1/me', { headers: s.headers })).status).toBe(401);
    expect((await auditOf(deps, user.id, 'user.disable'))[0]?.detail).toEqual({ sessions_revoked: 1 });
    await app(deps).request(`/api/v1/users/${user.id}/disable`, jsonRequest('POST', { disabled: false }, owner.headers));
    // The old session was revoked, not merely suspended.
    expect((await app(deps).request('/api/v1/me', { headers: s.headers })).status).toBe(401);
    const fresh = await signIn(deps, { userId: user.id });
    expect((await app(deps).request('/api/v1/me', { headers: fresh.headers })).status).toBe(200);
  });

  it('protects the last owner from demotion, disabling and deletion (409 protected_admin)', async () => {
    const deps = createTestDeps(database());
    const only = await staff(deps);
    const owners = (await (await app(deps).request('/api/v1/users', { headers: only.headers })).json()) as {
      users: Array<{ id: string; role: string; disabled: boolean }>;
    };
    // The file's database holds other tests' owners: disable them so that `only` is the last one.
    for (const u of owners.users.filter((u) => u.role === 'owner' && u.id !== only.id)) {
      await app(deps).request(`/api/v1/users/${u.id}/disable`, jsonRequest('POST', { disabled: true }, only.headers));
    }
    for (const [method, suffix, body] of [
      ['PATCH', '', { role: 'admin' }],
      ['POST', '/disable', { disabled: true }],
      ['DELETE', '', undefined],
    ] as const) {
      const init = body === undefined ? { method, headers: only.headers } : jsonRequest(method, body, only.headers);
      const res = await app(deps).request(`/api/v1/users/${only.id}${suffix}`, init);
      expect(res.status, method).toBe(409);
      expect((await errorOf(res)).code).toBe('protected_admin');
    }
    // With a second live owner, the first may step down.
    await createUser(deps, { role: 'owner' });
    const res = await app(deps).request(`/api/v1/users/${only.id}`, jsonRequest('PATCH', { role: 'admin' }, only.headers));
    expect(res.status).toBe(200);
  });

  it('soft-deletes a user: detail keeps deleted_at, sessions are revoked, the list drops them, the address is free', async () => {
    const deps = createTestDeps(database());
    const owner = await staff(deps);
    const email = `d-${randomUUID()}@example.com`;
    const user = await createUser(deps, { email });
    const s = await signIn(deps, { userId: user.id });
    const res = await app(deps).request(`/api/v1/users/${user.id}`, { method: 'DELETE', headers: owner.headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ deleted: true });
    expect((await app(deps).request('/api/v1/me', { headers: s.headers })).status).toBe(401);
    const list = (await (await app(deps).request('/api/v1/users', { headers: owner.headers })).json()) as { users: Array<{ id: string }> };
    expect(list.users.map((u) => u.id)).not.toContain(user.id);
    const detail = (await (await app(deps).request(`/api/v1/users/${user.id}`, { headers: owner.headers })).json()) as Record<string, unknown>;
    expect(detail.deleted_at).toBe(deps.clock.now().toISOString());
    expect((await auditOf(deps, user.id, 'user.delete'))[0]?.detail).toEqual({ sessions_revoked: 1 });
    const again = await app(deps).request(`/api/v1/users/${user.id}`, { method: 'DELETE', headers: owner.headers });
    expect(again.status).toBe(404);
    const reuse = await app(deps).request('/api/v1/users', jsonRequest('POST', { username: `r_${randomUUID().slice(0, 8)}`, email, role: 'user' }, owner.headers));
    expect(reuse.status).toBe(201);
  });

  it('reads and replaces quotas (the defaults until set; null and absent mean unlimited)', async () => {
    const deps = createTestDeps(database());
    const owner = await staff(deps);
    const user = await createUser(deps);
    const empty = await app(deps).request(`/api/v1/users/${user.id}/quotas`, { headers: owner.headers });
    expect(await empty.json()).toEqual({ user_id: user.id, max_servers: 3, max_cpu_milli: null, max_memory_mb: null, max_storage_gb: null });
    const put = await app(deps).request(
      `/api/v1/users/${user.id}/quotas`,
      jsonRequest('PUT', { max_servers: 3, max_cpu_milli: 2000, max_memory_mb: null }, owner.headers),
    );
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ user_id: user.id, max_servers: 3, max_cpu_milli: 2000, max_memory_mb: null, max_storage_gb: null });
    const replaced = await app(deps).request(`/api/v1/users/${user.id}/quotas`, jsonRequest('PUT', { user_id: user.id, max_storage_gb: 10 }, owner.headers));
    expect(await replaced.json()).toEqual({ user_id: user.id, max_servers: null, max_cpu_milli: null, max_memory_mb: null, max_storage_gb: 10 });
    for (const body of [{ max_servers: -1 }, { max_servers: 1.5 }, { max_servers: '3' }, { user_id: randomUUID() }]) {
      const bad = await app(deps).request(`/api/v1/users/${user.id}/quotas`, jsonRequest('PUT', body, owner.headers));
      expect(bad.status).toBe(400);
    }
    expect((await app(deps).request(`/api/v1/users/${randomUUID()}/quotas`, { headers: owner.headers })).status).toBe(404);
    expect((await auditOf(deps, user.id, 'user.quota')).length).toBe(2);
  });

  it("lists and revokes a user's sessions, audited", async () => {
    const deps = createTestDeps(database());
    const owner = await staff(deps);
    const user = await createUser(deps);
    const s1 = await signIn(deps, { userId: user.id });
    const s2 = await signIn(deps, { userId: user.id });
    const list = (await (await app(deps).request(`/api/v1/users/${user.id}/sessions`, { headers: owner.headers })).json()) as {
      sessions: Array<Record<string, unknown>>;
    };
    expect(list.sessions.map((x) => x.token_hash).sort()).toEqual([s1.tokenHash, s2.tokenHash].sort());
    expect(list.sessions[0]).not.toHaveProperty('current');
    const res = await app(deps).request(`/api/v1/users/${user.id}/sessions/${s1.tokenHash}`, { method: 'DELETE', headers: owner.headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect((await app(deps).request('/api/v1/me', { headers: s1.headers })).status).toBe(401);
    expect((await app(deps).request('/api/v1/me', { headers: s2.headers })).status).toBe(200);
    expect((await auditOf(deps, user.id, 'session.revoke'))[0]).toMatchObject({ actor: owner.id, detail: { token_hash: s1.tokenHash } });
    // A session of another user under this user's path is not found.
    const other = await createUser(deps);
    const so = await signIn(deps, { userId: other.id });
    const wrong = await app(deps).request(`/api/v1/users/${user.id}/sessions/${so.tokenHash}`, { method: 'DELETE', headers: owner.headers });
    expect(wrong.status).toBe(404);
  });

  it('refuses an empty PATCH and unknown fields with 400', async () => {
    const deps = createTestDeps(database());
    const owner = await staff(deps);
    const user = await createUser(deps);
    for (const body of [{}, { role: 'god' }, { disabled: true }, { username: 'x' }, { email: 'not-mail' }]) {
      const res = await app(deps).request(`/api/v1/users/${user.id}`, jsonRequest('PATCH', body, owner.headers));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
  });
});
