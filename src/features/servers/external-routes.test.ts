import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLog } from '../../db/schema/audit.js';
import { serverClaims, serverMaintenance } from '../../db/schema/servers.js';
import { createTestApps, createTestDeps, errorOf, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, addSystemServer, randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';
import { fleet } from './lists.js';
import { writeSetting } from './wakes/settings.js';
import type { FleetServer, MyServerView, ServerInfo } from './core/schema.js';

async function member(deps: TestDeps, role: 'user' | 'admin' | 'owner' = 'user', options: { email?: string } = {}) {
  const user = await createUser(deps, { role, ...options });
  await linkAccount(deps, { userId: user.id, mcUuid: randomMcUuid() });
  const session = await signIn(deps, { userId: user.id });
  return { ...user, headers: session.headers };
}

async function claimFor(deps: TestDeps, name: string, userId: string) {
  await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId, claimedAt: deps.clock.now() });
}

describe('external server routes', () => {
  const database = useTestDatabase();

  it('lets the owner wake and stop, refuses others with 403, and counts the cooldown (429)', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const owner = await member(deps);
    const stranger = await member(deps);
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, owner.id);
    const post = (action: string, headers: Record<string, string>) =>
      external.request(`/api/v1/servers/${name}/${action}`, { method: 'POST', headers });

    expect((await post('wake', stranger.headers)).status).toBe(403);
    expect((await post('stop', stranger.headers)).status).toBe(403);
    const woken = await post('wake', owner.headers);
    expect(woken.status).toBe(202);
    expect(await woken.json()).toEqual({ name, desiredState: 'Running' });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Running');
    const again = await post('wake', owner.headers);
    expect(again.status).toBe(429);
    expect(again.headers.get('retry-after')).toBe('30');
    const stopped = await post('stop', owner.headers);
    expect(stopped.status).toBe(202);
    expect(await stopped.json()).toEqual({ name, desiredState: 'Stopped' });
    expect(deps.cluster.server(name)!.status.phase).toBe('Stopping');
  });

  it('retries a failed start for the owner with a fresh restart budget and audits retry_start', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const owner = await member(deps);
    const stranger = await member(deps);
    const { name } = addServer(deps, { autostartPolicy: 'public' }).spec;
    await claimFor(deps, name, owner.id);
    deps.cluster.setStartHangs(name, true);
    await deps.cluster.setDesiredState(name, 'Running');
    for (let i = 0; i < 4; i++) {
      deps.clock.advance(deps.cluster.options.startTimeoutMs);
      deps.cluster.tick();
    }
    expect(deps.cluster.server(name)!.status).toMatchObject({ phase: 'Failed', startGaveUp: true, autoRestarts: 3 });

    const refused = await external.request(`/api/v1/servers/${name}/wake`, { method: 'POST', headers: stranger.headers });
    expect(refused.status).toBe(409);
    expect((await errorOf(refused)).code).toBe('start_failed');

    deps.cluster.setStartHangs(name, false);
    const retried = await external.request(`/api/v1/servers/${name}/wake`, { method: 'POST', headers: owner.headers });
    expect(retried.status).toBe(202);
    expect(deps.cluster.server(name)!.status).toMatchObject({ phase: 'Starting', autoRestarts: 0, startGaveUp: false });
    const audit = await deps.database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'retry_start'), eq(auditLog.target, name)));
    expect(audit).toEqual([expect.objectContaining({ actor: owner.id, requestId: retried.headers.get('x-request-id') })]);
    deps.clock.advance(deps.cluster.options.startDelayMs);
    deps.cluster.tick();
    expect(deps.cluster.server(name)!.status).toMatchObject({ phase: 'Running', ready: true });
  });

  it('refuses a panel wake while the world volume is held (409) and at the node cap (503)', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const owner = await member(deps);
    const held = addServer(deps).spec.name;
    await claimFor(deps, held, owner.id);
    await deps.database.db.insert(serverMaintenance).values({ serverName: held, reason: 'backup', since: deps.clock.now() });
    const busy = await external.request(`/api/v1/servers/${held}/wake`, { method: 'POST', headers: owner.headers });
    expect(busy.status).toBe(409);
    expect((await errorOf(busy)).code).toBe('maintenance_in_progress');

    const running = addServer(deps, { desiredState: 'Running' }).spec.name;
    await writeSetting(deps.database.db, 'node_server_cap', 1, deps.clock.now());
    const next = addServer(deps).spec.name;
    await claimFor(deps, next, owner.id);
    const full = await external.request(`/api/v1/servers/${next}/wake`, { method: 'POST', headers: owner.headers });
    expect(full.status).toBe(503);
    expect((await errorOf(full)).code).toBe('at_capacity');
    // A server that already holds a slot is not refused.
    await claimFor(deps, running, owner.id);
    expect((await external.request(`/api/v1/servers/${running}/wake`, { method: 'POST', headers: owner.headers })).status).toBe(202);
  });

  it('serves status to the owner, staff and for unclaimed servers; 403 for someone else’s; 404 unknown and system', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const owner = await member(deps);
    const stranger = await member(deps);
    const admin = await member(deps, 'admin');
    const { name } = addServer(deps).spec;
    const unclaimed = addServer(deps).spec.name;
    addSystemServer(deps, 'lobby');
    await claimFor(deps, name, owner.id);
    const status = (server: string, headers: Record<string, string>) => external.request(`/api/v1/servers/${server}/status`, { headers });
    const own = await status(name, owner.headers);
    expect(own.status).toBe(200);
    expect(((await own.json()) as ServerInfo).name).toBe(name);
    expect((await status(name, admin.headers)).status).toBe(200);
    expect((await status(unclaimed, stranger.headers)).status).toBe(200);
    expect((await status(name, stranger.headers)).status).toBe(403);
    for (const server of ['nosuchserver', 'lobby']) {
      for (const action of ['wake', 'stop', 'claim']) {
        const res = await external.request(`/api/v1/servers/${server}/${action}`, { method: 'POST', headers: owner.headers });
        expect(res.status, `${action} ${server}`).toBe(404);
      }
      expect((await status(server, owner.headers)).status).toBe(404);
    }
  });

  it('lists my servers: owned with their owner fields, unclaimed as claimable, never system or others’', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const me = await member(deps);
    const other = await member(deps);
    const mine = addServer(deps, { autostartPolicy: 'allowlist', displayName: 'Mine' }).spec.name;
    const free = addServer(deps).spec.name;
    const theirs = addServer(deps).spec.name;
    addSystemServer(deps, 'login');
    await claimFor(deps, mine, me.id);
    await claimFor(deps, theirs, other.id);
    deps.cluster.setPlayerCountUnknown(mine, true);
    const res = await external.request('/api/v1/me/servers', { headers: me.headers });
    expect(res.status).toBe(200);
    const rows = ((await res.json()) as { servers: MyServerView[] }).servers;
    expect(rows.find((r) => r.name === mine)).toEqual({
      name: mine,
      subdomain: mine,
      owned: true,
      claimable: false,
      playersOnline: 0,
      playersMax: 20,
      phase: 'Stopped',
      displayName: 'Mine',
      desiredState: 'Stopped',
      autostartPolicy: 'allowlist',
      playerCountUnknown: true,
    });
    expect(rows.find((r) => r.name === free)).toEqual({
      name: free,
      subdomain: free,
      owned: false,
      claimable: true,
      playersOnline: 0,
      playersMax: 20,
      phase: 'Stopped',
    });
    expect(rows.some((r) => r.name === theirs || r.name === 'login')).toBe(false);
  });

  it('lists my owned servers from the database when the cluster cannot be reached', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const me = await member(deps);
    await claimFor(deps, 'gone-away', me.id);
    deps.cluster.setReachable(false);
    const res = await external.request('/api/v1/me/servers', { headers: me.headers });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { servers: MyServerView[] }).servers).toEqual([
      { name: 'gone-away', subdomain: 'gone-away', owned: true, claimable: false, playersOnline: 0, playersMax: 0 },
    ]);
  });

  it('shows the fleet to staff: owners by display identity, system servers, owned and claimable', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const admin = await member(deps, 'admin');
    const owner = await member(deps, 'user', { email: `owner-${randomMcUuid().slice(0, 8)}@example.test` });
    const owned = addServer(deps).spec.name;
    const mine = addServer(deps).spec.name;
    const free = addServer(deps).spec.name;
    addSystemServer(deps, 'lobby');
    await claimFor(deps, owned, owner.id);
    await claimFor(deps, mine, admin.id);
    const res = await external.request('/api/v1/fleet', { headers: admin.headers });
    expect(res.status).toBe(200);
    const rows = ((await res.json()) as { servers: FleetServer[] }).servers;
    const row = (name: string) => rows.find((r) => r.name === name)!;
    expect(row(owned)).toMatchObject({ owned: false, claimable: false, system: false });
    expect(row(owned).owner).toMatch(/^owner-.*@example\.test$/);
    expect(row(mine)).toMatchObject({ owned: true, claimable: false, owner: admin.username });
    expect(row(free)).toMatchObject({ owned: false, claimable: true, system: false });
    expect(row(free)).not.toHaveProperty('owner');
    expect(row(free)).not.toHaveProperty('ownerUnknown');
    expect(row('lobby')).toMatchObject({ system: true, claimable: false, idleStopSeconds: 0 });
  });

  describe('tier matrix', () => {
    const appRoutes: Array<[string, string]> = [
      ['POST', '/api/v1/servers/tier/wake'],
      ['POST', '/api/v1/servers/tier/stop'],
      ['POST', '/api/v1/servers/tier/claim'],
      ['GET', '/api/v1/servers/tier/status'],
      ['GET', '/api/v1/me/servers'],
      ['GET', '/api/v1/servers/tier/allowlist'],
      ['PUT', '/api/v1/servers/tier/allowlist/069a79f4-44e9-4726-a5be-fca90e38aaf5'],
      ['PUT', '/api/v1/servers/tier/retirement'],
      ['DELETE', '/api/v1/servers/tier/retirement'],
    ];
    const adminRoutes: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/fleet'],
      ['POST', '/api/v1/servers', { name: 'tier', subdomain: 'tier' }],
      ['PATCH', '/api/v1/servers/tier', { displayName: 'Tier' }],
      ['GET', '/api/v1/images'],
      ['POST', '/api/v1/images', { image_ref: 'example/tier:1' }],
      ['PATCH', `/api/v1/images/${encodeURIComponent('example/tier:1')}`, { enabled: false }],
    ];
    const request = (method: string, body: unknown, headers: Record<string, string>): RequestInit =>
      body === undefined
        ? { method, headers }
        : { method, headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) };

    it.each(appRoutes)('%s %s: 401 without a session or with a forged cookie, 403 for a player on the console host, setup lockdown', async (method, path) => {
      const deps = createTestDeps(database());
      const { external, internal } = createTestApps(deps);
      const none = await external.request(path, { method, headers: { Host: 'panel.felis.test' } });
      expect(none.status).toBe(401);
      const forged = await external.request(path, { method, headers: { Host: 'panel.felis.test', Cookie: 'svc_session=forged' } });
      expect(forged.status).toBe(401);
      const player = await createUser(deps);
      const onConsole = await signIn(deps, { userId: player.id, host: 'console.felis.test' });
      const refused = await external.request(path, { method, headers: onConsole.headers });
      expect(refused.status).toBe(403);
      expect((await errorOf(refused)).code).toBe('forbidden');
      const setup = await createUser(deps, { inSetup: true });
      const inSetup = await external.request(path, { method, headers: (await signIn(deps, { userId: setup.id })).headers });
      if (path === '/api/v1/me/servers') expect(inSetup.status).toBe(200);
      else expect((await errorOf(inSetup)).code).toBe('setup_required');
      // A browser on another site never gets past the guard.
      if (method !== 'GET') {
        const cross = await external.request(path, { method, headers: { ...(await signIn(deps, { userId: player.id })).headers, 'Sec-Fetch-Site': 'cross-site' } });
        expect((await errorOf(cross)).code).toBe('cross_site');
      }
      const internalAnswer = await internal.request(path, { method, headers: (await signIn(deps, { userId: player.id })).headers });
      expect([401, 404, 405]).toContain(internalAnswer.status);
    });

    it.each(adminRoutes)('%s %s: 401 without a session, 403 for a player, 403 for staff off the console host', async (method, path, body) => {
      const deps = createTestDeps(database());
      const { external } = createTestApps(deps);
      expect((await external.request(path, request(method, body, { Host: 'console.felis.test' }))).status).toBe(401);
      const player = await createUser(deps);
      const onPanel = await external.request(path, request(method, body, (await signIn(deps, { userId: player.id })).headers));
      expect(onPanel.status).toBe(403);
      const onConsole = await external.request(
        path,
        request(method, body, (await signIn(deps, { userId: player.id, host: 'console.felis.test' })).headers),
      );
      expect(onConsole.status).toBe(403);
      const admin = await createUser(deps, { role: 'admin' });
      const adminOnPanel = await external.request(
        path,
        request(method, body, (await signIn(deps, { userId: admin.id, host: 'panel.felis.test' })).headers),
      );
      expect(adminOnPanel.status).toBe(403);
      expect((await errorOf(adminOnPanel)).code).toBe('forbidden');
    });
  });
});

describe('fleet owner lookup', () => {
  const database = useTestDatabase();

  it('marks rows ownerUnknown and not claimable when the ownership lookup fails', async () => {
    const deps = createTestDeps(database());
    addServer(deps);
    addSystemServer(deps, 'lobby');
    const failing = new Proxy(deps.database.db, {
      get(target, key, receiver) {
        if (key === 'select') return () => { throw new Error('database went away'); };
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const rows = await fleet({ ...deps, database: { ...deps.database, db: failing } }, 'someone');
    expect(rows.length).toBe(2);
    for (const row of rows) expect(row).toMatchObject({ owned: false, claimable: false, ownerUnknown: true });
    expect(deps.captured.lines().some((l) => l.msg === 'fleet owner lookup failed')).toBe(true);
  });
});
