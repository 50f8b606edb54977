import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLog } from '../../db/schema/audit.js';
import { serverClaims } from '../../db/schema/servers.js';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, startServer } from '../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { SseReader } from '../../../test/helpers/sse.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { claimFor } from '../../../test/helpers/worlds.js';
import { LogHubs } from '../console/index.js';
import { OWNER_OR_ADMIN_ROUTES as ROUTES } from '../../../test/helpers/server-routes.js';
import type { ChangeFeed } from '../../db/change-feed.js';
import { AccessChanges, MEMBER_PERMISSIONS, type Need } from './core/access.js';
import { writeSetting } from './wakes/settings.js';

const database = useTestDatabase();

async function setUp() {
  const deps = createTestDeps(database());
  const { external } = createTestApps(deps);
  const owner = await createUser(deps, { email: `${crypto.randomUUID()}@example.test`, emailVerified: true });
  const ownerIn = await signIn(deps, { userId: owner.id });
  const { name } = addServer(deps).spec;
  await claimFor(deps, name, owner.id);
  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    external.request(`/api/v1/servers/${name}/${path}`, body === undefined ? { method, headers } : jsonRequest(method, body, headers));
  /** A new account made a member by the owner through the route, signed in on the panel. */
  const member = async (permissions: string[]) => {
    const user = await createUser(deps);
    const res = await call('POST', 'members', ownerIn.headers, { user: user.username, permissions });
    expect(res.status).toBe(201);
    return { ...user, ...(await signIn(deps, { userId: user.id })) };
  };
  return { deps, external, owner, ownerIn, name, call, member };
}

/** Whether the answer is the access rule's refusal (any other answer means the rule let it pass). */
async function refused(res: Response): Promise<boolean> {
  if (res.status === 403) return (await errorOf(res)).code === 'forbidden';
  await res.body?.cancel(); // a console stream the rule let open
  return false;
}

describe('server members', () => {
  it('admits a member to exactly the routes of its permission; the owner and staff to all; a stranger to none', async () => {
    const { deps, call, ownerIn, member } = await setUp();
    const admin = await createUser(deps, { role: 'admin' });
    const adminIn = await signIn(deps, { userId: admin.id, host: deps.config.panelHost });
    const stranger = await createUser(deps);
    const strangerIn = await signIn(deps, { userId: stranger.id });
    for (const permission of MEMBER_PERMISSIONS) {
      const m = await member([permission]);
      for (const route of ROUTES) {
        const res = await call(route.method, route.path, m.headers, route.body);
        const admitted = route.need === 'member' || route.need === permission;
        expect(await refused(res), `${permission}: ${route.method} ${route.path} (${res.status})`).toBe(!admitted);
      }
    }
    for (const route of ROUTES) {
      expect(await refused(await call(route.method, route.path, strangerIn.headers, route.body)), `stranger: ${route.method} ${route.path}`).toBe(true);
      expect(await refused(await call(route.method, route.path, adminIn.headers, route.body)), `staff: ${route.method} ${route.path}`).toBe(false);
    }
    for (const route of ROUTES) {
      expect(await refused(await call(route.method, route.path, ownerIn.headers, route.body)), `owner: ${route.method} ${route.path}`).toBe(false);
    }
    // About 330 requests: a generous bound for a loaded machine (no time is asserted).
  }, 240_000);

  it('lists, adds, changes and removes members; /me/servers shows a shared server with member: true and its permissions', async () => {
    const { deps, external, call, ownerIn, owner, name } = await setUp();
    const friend = await createUser(deps, { email: 'Friend@Example.test' });
    const friendIn = await signIn(deps, { userId: friend.id });
    const added = await call('POST', 'members', ownerIn.headers, { user: 'friend@example.TEST', permissions: ['power', 'console.read', 'power'] });
    expect(added.status).toBe(201);
    const view = await added.json();
    expect(view).toMatchObject({ user_id: friend.id, username: friend.username, email: 'Friend@Example.test', permissions: ['console.read', 'power'], added_by: owner.id });
    expect((await (await call('GET', 'members', ownerIn.headers)).json()).members).toEqual([view]);

    const mine = (await (await external.request('/api/v1/me/servers', { headers: friendIn.headers })).json()) as { servers: Array<Record<string, unknown>> };
    expect(mine.servers.find((s) => s.name === name)).toMatchObject({ name, owned: false, claimable: false, member: true, permissions: ['console.read', 'power'] });

    const changed = await call('PUT', `members/${friend.id}`, ownerIn.headers, { permissions: ['files.read'] });
    expect(changed.status).toBe(200);
    expect((await changed.json()).permissions).toEqual(['files.read']);
    expect(await refused(await call('POST', 'stop', friendIn.headers))).toBe(true);

    // A member never manages members.
    expect(await refused(await call('GET', 'members', friendIn.headers))).toBe(true);
    expect(await refused(await call('DELETE', `members/${owner.id}`, friendIn.headers))).toBe(true);

    expect((await call('DELETE', `members/${friend.id}`, ownerIn.headers)).status).toBe(204);
    expect(await refused(await call('GET', 'status', friendIn.headers))).toBe(true);
    expect((await errorOf(await call('DELETE', `members/${friend.id}`, ownerIn.headers))).code).toBe('not_found');
    expect((await errorOf(await call('PUT', `members/${friend.id}`, ownerIn.headers, { permissions: [] }))).code).toBe('not_found');
    const actions = (await deps.database.db.select().from(auditLog).where(eq(auditLog.target, name))).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(['server.member.add', 'server.member.update', 'server.member.remove']));
  });

  it('audits a member\'s change with the member as actor, shown in the owner\'s activity', async () => {
    const { deps, external, call, member, name, ownerIn } = await setUp();
    await startServer(deps, name);
    const m = await member(['power']);
    expect((await call('POST', 'restart', m.headers)).status).toBeLessThan(300);
    const [row] = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.action, 'server.restart'), eq(auditLog.target, name)));
    expect(row).toMatchObject({ actor: m.id, target: name });
    const activity = await (await external.request(`/api/v1/servers/${name}/activity`, { headers: ownerIn.headers })).json();
    expect(JSON.stringify(activity)).toContain('server.restart');
    expect(JSON.stringify(activity)).toContain(m.id);
  });

  it('counts a member\'s wake against the owner\'s share of the running slots, not its own', async () => {
    const { deps, external, call, member, owner, ownerIn, name } = await setUp();
    // 8 slots, 25 % of them an account's share (the owner's servers may hold 2); a player keeps 1 it does not own.
    await writeSetting(deps.database.db, 'node_server_cap', 8, deps.clock.now());
    await writeSetting(deps.database.db, 'wake_share_per_player', 1, deps.clock.now());
    const m = await member(['power']);
    expect((await call('POST', 'wake', m.headers)).status).toBe(202);
    // Not the member's own guest start: a public server of nobody's still wakes for it.
    const open = addServer(deps, { autostartPolicy: 'public' }).spec.name;
    expect((await external.request(`/api/v1/servers/${open}/wake`, { method: 'POST', headers: m.headers })).status).toBe(202);
    // The owner's: with the member's wake, its servers hold their 2 after one more.
    const [second, third] = [addServer(deps).spec.name, addServer(deps).spec.name];
    for (const other of [second, third]) await claimFor(deps, other, owner.id);
    expect((await external.request(`/api/v1/servers/${second}/wake`, { method: 'POST', headers: ownerIn.headers })).status).toBe(202);
    const refused = await external.request(`/api/v1/servers/${third}/wake`, { method: 'POST', headers: ownerIn.headers });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe('wake_share_exceeded');
  });

  it('lets a member leave by itself', async () => {
    const { call, member, ownerIn } = await setUp();
    const m = await member(['power']);
    expect((await call('DELETE', `members/${m.id}`, m.headers)).status).toBe(204);
    expect(await refused(await call('POST', 'stop', m.headers))).toBe(true);
    expect((await errorOf(await call('DELETE', `members/${m.id}`, m.headers))).code).toBe('not_found');
    expect((await (await call('GET', 'members', ownerIn.headers)).json()).members).toEqual([]);
  });

  it('refuses bad adds: unknown permission, the owner, a second add, an unknown user, no fresh proof, unknown fields', async () => {
    const { deps, call, ownerIn, owner, member } = await setUp();
    const m = await member(['power']);
    const expectCode = async (res: Response, status: number, code: string) => {
      expect(res.status).toBe(status);
      expect((await errorOf(res)).code).toBe(code);
    };
    await expectCode(await call('POST', 'members', ownerIn.headers, { user: m.username, permissions: ['delete.everything'] }), 400, 'bad_request');
    await expectCode(await call('POST', 'members', ownerIn.headers, { user: owner.username, permissions: [] }), 400, 'bad_request');
    await expectCode(await call('POST', 'members', ownerIn.headers, { user: m.username, permissions: ['power'] }), 409, 'already_member');
    await expectCode(await call('POST', 'members', ownerIn.headers, { user: 'nobody-at-all', permissions: [] }), 404, 'user_not_found');
    await expectCode(await call('POST', 'members', ownerIn.headers, { user: m.username, permissions: [], extra: 1 }), 400, 'bad_request');
    await expectCode(await call('POST', 'members', ownerIn.headers, { user: m.username }), 400, 'bad_request');
    await expectCode(await call('PUT', 'members/not-a-uuid', ownerIn.headers, { permissions: [] }), 400, 'bad_request');
    // A password sign-in of an account with a verified address proves nothing: the add needs a proof.
    const stale = await signIn(deps, { userId: owner.id, method: 'password' });
    const other = await createUser(deps);
    await expectCode(await call('POST', 'members', stale.headers, { user: other.username, permissions: [] }), 403, 'reauth_required');
  });

  it('runs the tier suite over the member routes', async () => {
    const { external, name } = await setUp();
    const uuid = '0f0e0d0c-0b0a-4908-8706-050403020100';
    await expectTierMatrix(external, [
      { method: 'GET', path: `/api/v1/servers/${name}/members`, access: { tier: 'app' } },
      { method: 'POST', path: `/api/v1/servers/${name}/members`, access: { tier: 'app' } },
      { method: 'PUT', path: `/api/v1/servers/${name}/members/${uuid}`, access: { tier: 'app' } },
      { method: 'DELETE', path: `/api/v1/servers/${name}/members/${uuid}`, access: { tier: 'app' } },
    ]);
  });

  it('forgets a former owner\'s members when the server changes hands', async () => {
    const { deps, call, member, name, owner } = await setUp();
    const m = await member(['power']);
    const next = await createUser(deps);
    await deps.database.db.update(serverClaims).set({ userId: next.id }).where(and(eq(serverClaims.serverName, name), eq(serverClaims.userId, owner.id)));
    expect(await refused(await call('POST', 'stop', m.headers))).toBe(true);
  });

  it('ends a removed member\'s open console stream at once, with event: revoked', async () => {
    const deps0 = createTestDeps(database());
    // Re-checks a minute apart: only the removal itself can end the stream within the test.
    const deps: TestDeps = Object.assign(deps0, { consoleLogs: new LogHubs({ cluster: deps0.cluster, clock: deps0.clock, log: deps0.log }) });
    const { external } = createTestApps(deps);
    const owner = await createUser(deps);
    const ownerIn = await signIn(deps, { userId: owner.id });
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, owner.id);
    await startServer(deps, name);
    const friend = await createUser(deps);
    const friendIn = await signIn(deps, { userId: friend.id });
    expect((await external.request(`/api/v1/servers/${name}/members`, jsonRequest('POST', { user: friend.username, permissions: ['console.read'] }, ownerIn.headers))).status).toBe(201);
    const res = await external.request(`/api/v1/servers/${name}/console`, { headers: { ...friendIn.headers, Accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const reader = new SseReader(res.body!);
    await reader.until((r) => r.messages().length > 0);
    expect(reader.ended).toBe(false);
    expect((await external.request(`/api/v1/servers/${name}/members/${friend.id}`, { method: 'DELETE', headers: ownerIn.headers })).status).toBe(204);
    await reader.until((r) => r.ended);
    expect(reader.events.at(-1)).toEqual({ event: 'revoked', data: 'revoked' });
  });
});

describe('access changes told by another replica', () => {
  it('listen to the change feed from the first watch until closed', () => {
    const subscribers = new Set<() => void>();
    const feed: ChangeFeed = {
      seenThrough: () => 0,
      subscribe: (onChange) => {
        subscribers.add(onChange);
        return () => subscribers.delete(onChange);
      },
      close: async () => {},
    };
    const changes = new AccessChanges(feed);
    expect(subscribers.size).toBe(0);
    const seen: string[] = [];
    const stopAlpha = changes.watch('alpha', () => seen.push('alpha'));
    changes.watch('beta', () => seen.push('beta'));
    expect(subscribers.size).toBe(1);
    for (const told of subscribers) told();
    expect(seen).toEqual(['alpha', 'beta']);
    stopAlpha();
    for (const told of subscribers) told();
    expect(seen).toEqual(['alpha', 'beta', 'beta']);
    changes.close();
    expect(subscribers.size).toBe(0);
    changes.watch('alpha', () => seen.push('alpha'));
    expect(subscribers.size).toBe(0);
  });
});
