import { and, eq, inArray, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { apiKeys } from '../../../db/schema/accounts.js';
import { auditLog } from '../../../db/schema/audit.js';
import { API_KEYS_PER_USER } from './api-keys.js';
import { createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { OWNER_OR_ADMIN_ROUTES } from '../../../../test/helpers/server-routes.js';
import { addServer, startServer } from '../../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../../test/helpers/sessions.js';
import { expectTierMatrix } from '../../../../test/helpers/tier-matrix.js';
import { claimFor } from '../../../../test/helpers/worlds.js';

const database = useTestDatabase();

async function setUp() {
  const deps = createTestDeps(database());
  const apps = createTestApps(deps);
  const user = await createUser(deps, { email: `${crypto.randomUUID()}@example.test`, emailVerified: true });
  // A passkey sign-in a moment ago is a fresh proof: the key may be made.
  const session = await signIn(deps, { userId: user.id });
  const panel = deps.config.panelHost!;
  const makeKey = async (body: Record<string, unknown> = { name: 'ci' }) => {
    const res = await apps.external.request('/api/v1/account/api-keys', jsonRequest('POST', body, session.headers));
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; secret: string; prefix: string; scopes: string[] };
  };
  const withKey = (secret: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${secret}`, Host: panel, ...extra });
  return { deps, ...apps, user, session, panel, makeKey, withKey };
}

const codeOf = async (res: Response) => ({ status: res.status, code: res.status >= 400 ? (await errorOf(res)).code : undefined });

describe('API keys', () => {
  it('shows the secret once, keeps only its hash, lists keys without it, and acts as its user on /me', async () => {
    const { deps, external, user, session, makeKey, withKey } = await setUp();
    const key = await makeKey({ name: 'discord bot' });
    expect(key.secret).toMatch(/^felis_[A-Za-z0-9_-]{40,}$/);
    expect(key.prefix).toBe(key.secret.slice(0, 12));
    expect(key.scopes).toEqual(['read', 'write']);
    const [row] = await deps.database.db.select().from(apiKeys).where(eq(apiKeys.id, key.id));
    expect(row!.secretHash).not.toContain(key.secret.slice(6));
    const listed = await (await external.request('/api/v1/account/api-keys', { headers: session.headers })).json();
    expect(JSON.stringify(listed)).not.toContain(key.secret);
    expect(listed.keys).toEqual([expect.objectContaining({ id: key.id, name: 'discord bot', prefix: key.prefix })]);

    const me = await external.request('/api/v1/me', { headers: withKey(key.secret) });
    expect(me.status).toBe(200);
    expect((await me.json()).user_id).toBe(user.id);
    const [used] = await deps.database.db.select().from(apiKeys).where(eq(apiKeys.id, key.id));
    expect(used!.lastUsedAt?.toISOString()).toBe(deps.clock.now().toISOString());
  });

  it('passes the app tier on the panel host only: 401 on the console host and the internal face, 403 on the admin tier, 401 in a cookie', async () => {
    const { deps, external, internal, makeKey, withKey } = await setUp();
    const { secret } = await makeKey();
    expect(await codeOf(await external.request('/api/v1/me', { headers: withKey(secret, { Host: deps.config.consoleHost! }) }))).toEqual({ status: 401, code: 'unauthorized' });
    expect(await codeOf(await internal.request('/api/v1/servers', { headers: { Authorization: `Bearer ${secret}` } }))).toEqual({ status: 401, code: 'unauthorized' });
    expect(await codeOf(await external.request('/api/v1/users', { headers: withKey(secret) }))).toEqual({ status: 403, code: 'forbidden' });
    expect(await codeOf(await external.request('/api/v1/me', { headers: { Cookie: `svc_session=${secret}`, Host: deps.config.panelHost! } }))).toEqual({ status: 401, code: 'unauthorized' });
    expect(await codeOf(await external.request('/api/v1/me', { headers: withKey(`${secret}x`) }))).toEqual({ status: 401, code: 'unauthorized' });
    expect(await codeOf(await external.request('/api/v1/me', { headers: withKey('felis_short') }))).toEqual({ status: 401, code: 'unauthorized' });
  });

  it('a read key only reads; no key makes or revokes keys', async () => {
    const { external, makeKey, withKey } = await setUp();
    const read = await makeKey({ name: 'reader', scopes: ['read'] });
    expect(read.scopes).toEqual(['read']);
    const full = await makeKey({ name: 'full' });
    expect((await external.request('/api/v1/account/api-keys', { headers: withKey(read.secret) })).status).toBe(200);
    expect(await codeOf(await external.request('/api/v1/account/sessions/revoke-others', { method: 'POST', headers: withKey(read.secret) }))).toEqual({ status: 403, code: 'forbidden' });
    expect(await codeOf(await external.request('/api/v1/account/api-keys', jsonRequest('POST', { name: 'more' }, withKey(full.secret))))).toEqual({ status: 403, code: 'forbidden' });
    expect(await codeOf(await external.request(`/api/v1/account/api-keys/${read.id}`, { method: 'DELETE', headers: withKey(full.secret) }))).toEqual({ status: 403, code: 'forbidden' });
  });

  it('refuses bad input: an expiry in the past, unknown scopes or fields, a missing name, no fresh proof', async () => {
    const { deps, external, session, user } = await setUp();
    const post = (body: unknown, headers = session.headers) => external.request('/api/v1/account/api-keys', jsonRequest('POST', body, headers));
    const past = new Date(deps.clock.now().getTime() - 1000).toISOString();
    expect(await codeOf(await post({ name: 'x', expires_at: past }))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await post({ name: 'x', scopes: ['admin'] }))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await post({ name: 'x', scopes: ['write'] }))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await post({ name: 'x', secret: 'mine' }))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await post({}))).toEqual({ status: 400, code: 'bad_request' });
    expect(await codeOf(await external.request('/api/v1/account/api-keys/not-a-uuid', { method: 'DELETE', headers: session.headers }))).toEqual({ status: 400, code: 'bad_request' });
    const stale = await signIn(deps, { userId: user.id, method: 'password' });
    expect(await codeOf(await post({ name: 'x' }, stale.headers))).toEqual({ status: 403, code: 'reauth_required' });
  });

  it('holds at most 25 live keys an account: the next is 409 conflict until one is revoked', async () => {
    const { external, session, makeKey } = await setUp();
    const keys = [];
    for (let i = 0; i < API_KEYS_PER_USER; i++) keys.push(await makeKey({ name: `k${i}` }));
    const over = await external.request('/api/v1/account/api-keys', jsonRequest('POST', { name: 'one too many' }, session.headers));
    expect(await codeOf(over)).toEqual({ status: 409, code: 'conflict' });
    expect((await external.request(`/api/v1/account/api-keys/${keys[0]!.id}`, { method: 'DELETE', headers: session.headers })).status).toBe(204);
    await makeKey({ name: 'in its place' });
  });

  it('is 401 once expired, and once revoked: between two requests of one client the second is 401', async () => {
    const { deps, external, session, makeKey, withKey } = await setUp();
    const expiring = await makeKey({ name: 'short', expires_at: new Date(deps.clock.now().getTime() + 60_000).toISOString() });
    const key = await makeKey();
    expect((await external.request('/api/v1/me', { headers: withKey(expiring.secret) })).status).toBe(200);
    expect((await external.request('/api/v1/me', { headers: withKey(key.secret) })).status).toBe(200);
    expect((await external.request(`/api/v1/account/api-keys/${key.id}`, { method: 'DELETE', headers: session.headers })).status).toBe(204);
    expect(await codeOf(await external.request('/api/v1/me', { headers: withKey(key.secret) }))).toEqual({ status: 401, code: 'unauthorized' });
    expect(await codeOf(await external.request(`/api/v1/account/api-keys/${key.id}`, { method: 'DELETE', headers: session.headers }))).toEqual({ status: 404, code: 'not_found' });
    deps.clock.advance(60_000);
    expect(await codeOf(await external.request('/api/v1/me', { headers: withKey(expiring.secret) }))).toEqual({ status: 401, code: 'unauthorized' });
    expect((await (await external.request('/api/v1/account/api-keys', { headers: session.headers })).json()).keys).toEqual([]);
  });

  it('dies with its user: disabling (for good), deletion, sign out everywhere (own and staff\'s)', async () => {
    const { deps, external, user, makeKey, withKey } = await setUp();
    const owner = await createUser(deps, { role: 'owner' });
    const staff = await signIn(deps, { userId: owner.id });
    const me = (secret: string) => external.request('/api/v1/me', { headers: withKey(secret) });

    const a = await makeKey();
    expect((await external.request(`/api/v1/users/${user.id}/disable`, jsonRequest('POST', { disabled: true }, staff.headers))).status).toBe(200);
    expect((await me(a.secret)).status).toBe(401);
    expect((await external.request(`/api/v1/users/${user.id}/disable`, jsonRequest('POST', { disabled: false }, staff.headers))).status).toBe(200);
    expect((await me(a.secret)).status).toBe(401);

    const fresh = await signIn(deps, { userId: user.id });
    const make = async () => {
      const res = await external.request('/api/v1/account/api-keys', jsonRequest('POST', { name: 'k' }, fresh.headers));
      return ((await res.json()) as { secret: string }).secret;
    };
    const b = await make();
    expect((await external.request('/api/v1/account/sessions/revoke-others', { method: 'POST', headers: fresh.headers })).status).toBe(200);
    expect((await me(b)).status).toBe(401);
    const c = await make();
    expect((await external.request(`/api/v1/users/${user.id}/sessions`, { method: 'DELETE', headers: staff.headers })).status).toBe(200);
    expect((await me(c)).status).toBe(401);

    // Deletion: the key is revoked for good (its row says so) and the audit counts it.
    const again = await signIn(deps, { userId: user.id });
    const made = await external.request('/api/v1/account/api-keys', jsonRequest('POST', { name: 'k' }, again.headers));
    const d = ((await made.json()) as { secret: string }).secret;
    expect((await me(d)).status).toBe(200);
    expect((await external.request(`/api/v1/users/${user.id}`, { method: 'DELETE', headers: staff.headers })).status).toBe(200);
    expect(await codeOf(await me(d))).toEqual({ status: 401, code: 'unauthorized' });
    const left = await deps.database.db.select({ revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.userId, user.id));
    expect(left.length).toBeGreaterThan(0);
    expect(left.every((k) => k.revokedAt !== null)).toBe(true);
    const [deleted] = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.action, 'user.delete'), eq(auditLog.target, user.id)));
    expect(deleted!.detail).toMatchObject({ api_keys_revoked: 1 });
  });

  it('is limited per key, counted in the database: 429 rate_limited with Retry-After past the limit', async () => {
    const { deps, external, makeKey, withKey } = await setUp();
    const key = await makeKey();
    expect((await external.request('/api/v1/me', { headers: withKey(key.secret) })).status).toBe(200);
    // Another replica's requests of this minute, as the shared row counts them.
    await deps.database.db.update(apiKeys).set({ windowCount: deps.config.apiKeyRequestsPerMinute }).where(eq(apiKeys.id, key.id));
    const over = await external.request('/api/v1/me', { headers: withKey(key.secret) });
    expect(await codeOf(over.clone())).toEqual({ status: 429, code: 'rate_limited' });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    deps.clock.advance(60_000);
    expect((await external.request('/api/v1/me', { headers: withKey(key.secret) })).status).toBe(200);
  });

  it('skips the cross-site check, acts on a server as its user, and the audit names the key to the owner', async () => {
    const { deps, external, user, session, makeKey, withKey } = await setUp();
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, user.id);
    const key = await makeKey();
    const stop = await external.request(`/api/v1/servers/${name}/stop`, { method: 'POST', headers: withKey(key.secret, { Origin: 'https://elsewhere.example', 'Sec-Fetch-Site': 'cross-site' }) });
    expect(stop.status).toBe(202);
    await expect
      .poll(async () => (await deps.database.db.select().from(auditLog).where(sql`${auditLog.detail}->>'api_key_id' = ${key.id} and ${auditLog.target} = ${name}`)).map((r) => [r.actor, r.target]))
      .toEqual([[user.id, name]]);
    const activity = await (await external.request(`/api/v1/servers/${name}/activity`, { headers: session.headers })).json();
    expect(JSON.stringify(activity)).toContain(key.id);
    // A cookie's unsafe request from another site is still refused.
    expect(await codeOf(await external.request(`/api/v1/servers/${name}/stop`, { method: 'POST', headers: { ...session.headers, 'Sec-Fetch-Site': 'cross-site' } }))).toEqual({ status: 403, code: 'cross_site' });
  });

  it('every audit row of a change made through a key names the key: the front door\'s and each feature\'s own', async () => {
    const { deps, external, user, session, makeKey, withKey } = await setUp();
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, user.id);
    await startServer(deps, name);
    const friend = await createUser(deps);
    expect((await external.request(`/api/v1/servers/${name}/members`, jsonRequest('POST', { user: friend.username, permissions: ['console.read'] }, session.headers))).status).toBe(201);
    const key = await makeKey();
    // Changes through the owner's key that each feature audits itself too, each request with its own id.
    const changes: Array<[method: string, path: string, body?: unknown]> = [
      ['POST', 'command', { command: 'list' }],
      ['POST', 'restart'],
      ['POST', 'schedules', { label: 'Nightly restart', action: 'restart', minute_of_day: 240, weekdays: 127, timezone: 'Europe/Berlin', warn_minutes: 5 }],
      ['PUT', `members/${friend.id}`, { permissions: ['power'] }],
      ['PUT', 'retirement', { confirm: name, delete: false }],
      ['DELETE', 'retirement'],
    ];
    const ids = changes.map((_, i) => `through-key-${i}`);
    for (const [i, [method, path, body]] of changes.entries()) {
      const headers = withKey(key.secret, { 'X-Request-Id': ids[i]! });
      const res = await external.request(`/api/v1/servers/${name}/${path}`, body === undefined ? { method, headers } : jsonRequest(method, body, headers));
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
    }
    const rows = () => deps.database.db.select().from(auditLog).where(and(inArray(auditLog.requestId, ids), eq(auditLog.actor, user.id)));
    // The front door writes its row beside the answer: wait for one per change.
    await expect.poll(async () => (await rows()).filter((r) => r.action.includes(' ')).length).toBe(changes.length);
    const all = await rows();
    expect(all.filter((r) => !r.action.includes(' ')).map((r) => r.action).sort()).toEqual(
      ['console.command', 'schedule.create', 'server.member.update', 'server.restart', 'server.retire', 'server.retire_cancel'].sort(),
    );
    for (const row of all) expect(row.detail, row.action).toMatchObject({ api_key_id: key.id });
  });

  it('runs the tier suite over the key routes', async () => {
    const { external } = await setUp();
    await expectTierMatrix(external, [
      { method: 'GET', path: '/api/v1/account/api-keys', access: { tier: 'app' } },
      { method: 'POST', path: '/api/v1/account/api-keys', access: { tier: 'app' } },
      { method: 'DELETE', path: '/api/v1/account/api-keys/0f0e0d0c-0b0a-4908-8706-050403020100', access: { tier: 'app' } },
    ]);
  });
});
