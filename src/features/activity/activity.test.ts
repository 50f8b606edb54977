import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, uniqueServerName } from '../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { describeTierMatrix } from '../../../test/helpers/tiers.js';
import { serverClaims } from '../../db/schema/servers.js';
import { writeAudit } from '../audit/index.js';

const HOUR = 3600_000;
type Page = { entries: Array<{ action: string; actor: string; actor_username: string | null; target: string | null; request_id: string | null; at: string }>; total: number; limit: number; offset: number };

describe('activity: GET /audit for staff, a server\'s activity for its owner', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let apps: ReturnType<typeof createTestApps>;
  let staffId: string;
  let owner: { id: string; username: string };
  let server: string;
  let t0: number;

  beforeAll(async () => {
    deps = createTestDeps(database());
    apps = createTestApps(deps);
    staffId = (await createUser(deps, { role: 'owner' })).id;
    owner = await createUser(deps);
    server = uniqueServerName('act');
    addServer(deps, { name: server, subdomain: server });
    t0 = deps.clock.now().getTime();
    const at = (hours: number) => new Date(t0 - hours * HOUR);
    const { db } = deps.database;
    // Before the owner claimed the server (a former owner's history), then after.
    await writeAudit(db, { at: at(10), actor: 'someone-else', action: 'retry_start', target: server, requestId: 'req-old' });
    await db.insert(serverClaims).values({ serverName: server, subdomain: server, userId: owner.id, claimedAt: at(8) });
    await writeAudit(db, { at: at(6), actor: owner.id, action: 'retry_start', target: server, requestId: 'req-1' });
    await writeAudit(db, { at: at(4), actor: owner.id, action: 'server.patch', target: server, detail: { idleStopSeconds: 60 }, requestId: 'req-2' });
    await writeAudit(db, { at: at(3), actor: staffId, action: 'user.disable', target: owner.id, requestId: 'req-3' });
    await writeAudit(db, { at: at(2), actor: 'system', action: 'retirement', target: 'other-server' });
  });

  const asStaff = async (path: string) => apps.external.request(path, { headers: (await signIn(deps, { userId: staffId })).headers });
  const asOwner = async (path: string) => apps.external.request(path, { headers: (await signIn(deps, { userId: owner.id })).headers });
  const page = async (res: Response) => {
    expect(res.status).toBe(200);
    return (await res.json()) as Page;
  };

  it('lists every audited action newest first, with actor, username, target and request id', async () => {
    const body = await page(await asStaff('/api/v1/audit'));
    const mine = body.entries.filter((e) => e.target === server || e.target === owner.id || e.target === 'other-server');
    expect(mine.map((e) => e.action)).toEqual(['retirement', 'user.disable', 'server.patch', 'retry_start', 'retry_start']);
    expect(mine[2]).toMatchObject({ actor: owner.id, actor_username: owner.username, target: server, request_id: 'req-2' });
    expect(mine[0]).toMatchObject({ actor: 'system', actor_username: null, request_id: null });
    expect(body).toMatchObject({ limit: 50, offset: 0 });
    const ats = body.entries.map((e) => Date.parse(e.at));
    expect([...ats].sort((a, b) => b - a)).toEqual(ats);
  });

  it('filters by actor, server, action and time, and pages with the total', async () => {
    expect((await page(await asStaff(`/api/v1/audit?actor=${owner.id}`))).entries.map((e) => e.action)).toEqual(['server.patch', 'retry_start']);
    const byServer = await page(await asStaff(`/api/v1/audit?server=${server}`));
    expect(byServer.total).toBe(3);
    expect((await page(await asStaff(`/api/v1/audit?server=${server}&action=retry_start`))).total).toBe(2);
    const since = new Date(t0 - 5 * HOUR).toISOString();
    const until = new Date(t0 - 2.5 * HOUR).toISOString();
    const window = await page(await asStaff(`/api/v1/audit?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`));
    expect(window.entries.map((e) => e.action)).toEqual(['user.disable', 'server.patch']);
    const first = await page(await asStaff(`/api/v1/audit?server=${server}&limit=2`));
    const second = await page(await asStaff(`/api/v1/audit?server=${server}&limit=2&offset=2`));
    expect(first.entries.map((e) => e.request_id)).toEqual(['req-2', 'req-1']);
    expect(second.entries.map((e) => e.request_id)).toEqual(['req-old']);
    expect(second).toMatchObject({ total: 3, limit: 2, offset: 2 });
  });

  it('refuses bad filters with 400 bad_request, never a 500', async () => {
    for (const query of ['limit=0', 'limit=201', 'offset=-1', 'since=yesterday', 'unknown=1', `actor=${'a'.repeat(129)}`, 'since=2026-06-02T00:00:00Z&until=2026-06-01T00:00:00Z']) {
      const res = await asStaff(`/api/v1/audit?${query}`);
      expect(res.status, query).toBe(400);
      expect((await errorOf(res)).code, query).toBe('bad_request');
    }
  });

  it('shows the owner their server\'s activity since their claim, and staff all of it', async () => {
    const own = await page(await asOwner(`/api/v1/servers/${server}/activity`));
    expect(own.entries.map((e) => e.request_id)).toEqual(['req-2', 'req-1']);
    const staff = await page(await asStaff(`/api/v1/servers/${server}/activity`));
    expect(staff.entries.map((e) => e.request_id)).toEqual(['req-2', 'req-1', 'req-old']);
    const filtered = await page(await asOwner(`/api/v1/servers/${server}/activity?action=server.patch`));
    expect(filtered.total).toBe(1);
  });

  it('refuses another user 403 forbidden, an unknown server 404, a bad name or query 400', async () => {
    const stranger = await createUser(deps);
    const res = await apps.external.request(`/api/v1/servers/${server}/activity`, { headers: (await signIn(deps, { userId: stranger.id })).headers });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('forbidden');
    const missing = await asOwner('/api/v1/servers/nosuchserver/activity');
    expect(missing.status).toBe(404);
    for (const path of [`/api/v1/servers/BAD..NAME/activity`, `/api/v1/servers/${server}/activity?limit=x`, `/api/v1/servers/${server}/activity?actor=x`]) {
      const bad = await asOwner(path);
      expect(bad.status, path).toBe(400);
      expect((await errorOf(bad)).code, path).toBe('bad_request');
    }
  });

  it('refuses a time outside what the database holds (year 0, past 9999) with 400 bad_request on /audit and a server\'s activity, never a 500', async () => {
    const instants = ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:00:00-05:00'];
    for (const at of instants) {
      for (const key of ['since', 'until']) {
        for (const [who, path] of [[asStaff, '/api/v1/audit'], [asOwner, `/api/v1/servers/${server}/activity`]] as const) {
          const res = await who(`${path}?${key}=${encodeURIComponent(at)}`);
          expect(res.status, `${path} ${key}=${at}`).toBe(400);
          expect((await errorOf(res)).code).toBe('bad_request');
        }
      }
    }
    // The first and last instants the database holds are still a window.
    const all = await page(await asStaff(`/api/v1/audit?server=${server}&since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59Z`));
    expect(all.total).toBe(3);
    expect((await page(await asOwner(`/api/v1/servers/${server}/activity?until=0001-01-01T00:00:00Z`))).total).toBe(0);
  });

  it('keeps GET /audit from a player: 403 forbidden', async () => {
    const res = await apps.external.request('/api/v1/audit', { headers: (await signIn(deps, { userId: owner.id, host: 'console.felis.test' })).headers });
    expect(res.status).toBe(403);
  });
});

describe('activity: every signed-in request that changes something is audited', () => {
  const database = useTestDatabase();

  it('records actor, request id, route and target of a change, and nothing for a refused or reading request', async () => {
    const deps = createTestDeps(database());
    const apps = createTestApps(deps);
    const staff = await createUser(deps, { role: 'owner' });
    const { headers } = await signIn(deps, { userId: staff.id });
    const created = await apps.external.request('/api/v1/settings/webhooks', jsonRequest('POST', { name: 'a', url: 'https://hooks.example.com/a' }, headers));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const patched = await apps.external.request(`/api/v1/settings/webhooks/${id}`, jsonRequest('PATCH', { enabled: false }, headers));
    expect(patched.status).toBe(200);
    const refused = await apps.external.request('/api/v1/settings/webhooks', jsonRequest('POST', { name: 'b', url: 'ftp://x' }, headers));
    expect(refused.status).toBe(400);
    await apps.external.request('/api/v1/settings/webhooks', { headers });

    const read = async () => {
      const res = await apps.external.request(`/api/v1/audit?actor=${staff.id}`, { headers });
      return ((await res.json()) as Page).entries.filter((e) => /^(POST|PUT|PATCH|DELETE) /.test(e.action));
    };
    await vi.waitFor(async () => expect(await read()).toHaveLength(2));
    // The two rows are written beside their answers, so either may land first: find each by its route.
    const rows = await read();
    const post = rows.find((e) => e.action.startsWith('POST '));
    const patch = rows.find((e) => e.action.startsWith('PATCH '));
    expect(post).toMatchObject({ action: 'POST /api/v1/settings/webhooks', target: null, request_id: created.headers.get('x-request-id') });
    expect(patch).toMatchObject({ action: 'PATCH /api/v1/settings/webhooks/:id', target: id, request_id: patched.headers.get('x-request-id') });
  });
});

describe('activity: tiers', () => {
  const database = useTestDatabase();
  describeTierMatrix(database, 'admin', [{ method: 'get', path: '/api/v1/audit' }]);
  describeTierMatrix(database, 'app', [{ method: 'get', path: '/api/v1/servers/survival/activity' }]);
});
