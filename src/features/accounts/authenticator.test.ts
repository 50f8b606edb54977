import { z } from '@hono/zod-openapi';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApp, createTestDeps, errorOf } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { sessions, users } from '../../db/schema/accounts.js';
import { createRouter, defineRoute } from '../../http/route.js';

const ok = { 200: { description: 'ok', content: { 'application/json': { schema: z.object({ user_id: z.string() }) } } } };
const appRoute = defineRoute({ tier: 'app' }, { method: 'get', path: '/t/app', responses: ok });
const setupRoute = defineRoute({ tier: 'app', setupAllowed: true }, { method: 'get', path: '/t/setup', responses: ok });
const adminRoute = defineRoute({ tier: 'admin' }, { method: 'get', path: '/t/admin', responses: ok });

const router = () =>
  createRouter()
    .openapi(appRoute, (c) => c.json({ user_id: c.var.session.userId }, 200))
    .openapi(setupRoute, (c) => c.json({ user_id: c.var.session.userId }, 200))
    .openapi(adminRoute, (c) => c.json({ user_id: c.var.session.userId }, 200));

describe('session authenticator', () => {
  const database = useTestDatabase();
  const setup = () => {
    const deps = createTestDeps(database());
    return { deps, app: createTestApp('external', deps, router()) };
  };

  it('accepts a player on the panel host for app routes and refuses the admin tier', async () => {
    const { deps, app } = setup();
    const user = await createUser(deps);
    const s = await signIn(deps, { userId: user.id });
    const res = await app.request('/t/app', { headers: s.headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ user_id: user.id });
    const admin = await app.request('/t/admin', { headers: s.headers });
    expect(admin.status).toBe(403);
    expect((await errorOf(admin)).code).toBe('forbidden');
  });

  it('refuses a player session on the console host with 403 forbidden on every tier', async () => {
    const { deps, app } = setup();
    const user = await createUser(deps);
    const s = await signIn(deps, { userId: user.id, host: 'console.felis.test' });
    for (const path of ['/t/app', '/t/admin']) {
      const res = await app.request(path, { headers: s.headers });
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('forbidden');
    }
  });

  it('serves the admin tier to staff on the console host only', async () => {
    const { deps, app } = setup();
    const staff = await createUser(deps, { role: 'admin' });
    const onConsole = await signIn(deps, { userId: staff.id });
    expect((await app.request('/t/admin', { headers: onConsole.headers })).status).toBe(200);
    const onPanel = await signIn(deps, { userId: staff.id, host: 'panel.felis.test' });
    expect((await app.request('/t/app', { headers: onPanel.headers })).status).toBe(200);
    const res = await app.request('/t/admin', { headers: onPanel.headers });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('forbidden');
  });

  it('never authenticates a session on a host other than the one it was minted on', async () => {
    const { deps, app } = setup();
    const staff = await createUser(deps, { role: 'owner' });
    const s = await signIn(deps, { userId: staff.id });
    const res = await app.request('/t/app', { headers: { ...s.headers, Host: 'panel.felis.test' } });
    expect(res.status).toBe(401);
    // Case and port of the Host header do not matter.
    expect((await app.request('/t/admin', { headers: { ...s.headers, Host: 'Console.Felis.Test:443' } })).status).toBe(200);
  });

  it('answers 401 without a cookie, with an unknown one, and after expiry', async () => {
    const { deps, app } = setup();
    expect((await app.request('/t/app', { headers: { Host: 'panel.felis.test' } })).status).toBe(401);
    expect((await app.request('/t/app', { headers: { Host: 'panel.felis.test', Cookie: 'svc_session=nope' } })).status).toBe(401);
    const user = await createUser(deps);
    const s = await signIn(deps, { userId: user.id });
    deps.clock.advance(30 * 24 * 3600 * 1000 + 1000);
    const res = await app.request('/t/app', { headers: s.headers });
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toMatch(/^svc_session=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Lax/);
    expect((await errorOf(res)).code).toBe('unauthorized');
  });

  it('slides the expiry and writes last_seen at most once a minute', async () => {
    const { deps, app } = setup();
    const user = await createUser(deps);
    const s = await signIn(deps, { userId: user.id });
    const seen = async () =>
      (await deps.database.db.select().from(sessions).where(eq(sessions.tokenHash, s.tokenHash)))[0]!;
    const minted = await seen();
    deps.clock.advance(30_000);
    const first = await app.request('/t/app', { headers: s.headers });
    expect(first.headers.get('set-cookie')).toBeNull();
    expect((await seen()).lastSeenAt).toEqual(minted.lastSeenAt);
    deps.clock.advance(31_000);
    const second = await app.request('/t/app', { headers: s.headers });
    expect(second.headers.get('set-cookie')).toMatch(/^svc_session=.+; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    const after = await seen();
    expect(after.lastSeenAt).toEqual(deps.clock.now());
    expect(after.expiresAt.getTime()).toBe(deps.clock.now().getTime() + 30 * 24 * 3600 * 1000);
    // Used every 29 days, a player's session never ends.
    for (let i = 0; i < 3; i++) {
      deps.clock.advance(29 * 24 * 3600 * 1000);
      expect((await app.request('/t/app', { headers: s.headers })).status).toBe(200);
    }
  });

  it('stops a staff session idle for 31 minutes, but not one idle for 29', async () => {
    const { deps, app } = setup();
    const staff = await createUser(deps, { role: 'admin' });
    const s = await signIn(deps, { userId: staff.id });
    deps.clock.advance(29 * 60_000);
    expect((await app.request('/t/admin', { headers: s.headers })).status).toBe(200);
    deps.clock.advance(31 * 60_000);
    const res = await app.request('/t/admin', { headers: s.headers });
    expect(res.status).toBe(401);
    // A player's session is not held to the staff idle limit.
    const user = await createUser(deps);
    const p = await signIn(deps, { userId: user.id });
    deps.clock.advance(31 * 60_000);
    expect((await app.request('/t/app', { headers: p.headers })).status).toBe(200);
  });

  it('stops the sessions of a disabled or deleted user at once', async () => {
    const { deps, app } = setup();
    const a = await createUser(deps);
    const b = await createUser(deps);
    const sa = await signIn(deps, { userId: a.id });
    const sb = await signIn(deps, { userId: b.id });
    expect((await app.request('/t/app', { headers: sa.headers })).status).toBe(200);
    await deps.database.db.update(users).set({ disabled: true }).where(eq(users.id, a.id));
    await deps.database.db.update(users).set({ deletedAt: deps.clock.now() }).where(eq(users.id, b.id));
    expect((await app.request('/t/app', { headers: sa.headers })).status).toBe(401);
    expect((await app.request('/t/app', { headers: sb.headers })).status).toBe(401);
  });

  it('answers 401 for a revoked session', async () => {
    const { deps, app } = setup();
    const a = await createUser(deps);
    const s = await signIn(deps, { userId: a.id });
    await deps.database.db.update(sessions).set({ revokedAt: deps.clock.now() }).where(eq(sessions.tokenHash, s.tokenHash));
    expect((await app.request('/t/app', { headers: s.headers })).status).toBe(401);
  });

  it('holds a setup session to the setup-allowed operations', async () => {
    const { deps, app } = setup();
    const owner = await createUser(deps, { role: 'owner', inSetup: true });
    const s = await signIn(deps, { userId: owner.id, method: 'setup_token' });
    expect((await app.request('/t/setup', { headers: s.headers })).status).toBe(200);
    for (const path of ['/t/app', '/t/admin']) {
      const res = await app.request(path, { headers: s.headers });
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('setup_required');
    }
  });
});
