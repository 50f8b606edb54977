import { describe, expect, it } from 'vitest';
import { FORWARDING_LABEL } from '../../adapters/cluster/types.js';
import { eq } from 'drizzle-orm';
import { users } from '../../db/schema/accounts.js';
import { serverClaims, serverMaintenance, serverMembers, serverWakeAllowlist, serverWakes } from '../../db/schema/servers.js';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, TOKENS, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, addSystemServer, randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount } from '../../../test/helpers/sessions.js';
import { writeSetting } from './wakes/settings.js';
import type { ServerInfo } from './core/schema.js';
import { MEMBER_PERMISSIONS } from './core/index.js';

async function linkedPlayer(deps: TestDeps, role: 'user' | 'admin' = 'user') {
  const user = await createUser(deps, { role });
  const mcUuid = randomMcUuid();
  await linkAccount(deps, { userId: user.id, mcUuid });
  return { id: user.id, mcUuid };
}

async function claimFor(deps: TestDeps, name: string, userId: string) {
  await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId, claimedAt: deps.clock.now() });
}

describe('internal server routes', () => {
  const database = useTestDatabase();

  const wakeOf = (deps: TestDeps) => {
    const { internal } = createTestApps(deps);
    return (name: string, mcUuid: string) =>
      internal.request(`/api/v1/internal/servers/${name}/wake`, jsonRequest('POST', { mc_uuid: mcUuid }, bearer('proxy')));
  };

  it('serves ServerInfo with optional fields absent, the legacy forwarding label and the start time-out fields', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const { name } = deps.cluster.addServer({ name: 'bare-' + randomMcUuid().slice(0, 8), subdomain: 'bare-sub-' + randomMcUuid().slice(0, 8), labels: {} }).spec;
    const status = async () =>
      (await (await internal.request(`/api/v1/internal/servers/${name}/status`, { headers: bearer('proxy') })).json()) as ServerInfo;
    const bare = await status();
    // The text the cache keeps (infoJsonOf) goes out as c.json would have written it.
    const raw = await internal.request(`/api/v1/internal/servers/${name}/status`, { headers: bearer('proxy') });
    expect(raw.headers.get('content-type')).toBe('application/json');
    expect(await raw.text()).toBe(JSON.stringify(bare));
    expect(Object.keys(bare).sort()).toEqual(
      ['desiredState', 'idleStopSeconds', 'name', 'phase', 'playersMax', 'playersOnline', 'ready', 'subdomain'].sort(),
    );
    expect(Object.values(bare)).not.toContain(null);

    deps.cluster.setLabel(name, FORWARDING_LABEL, 'legacy');
    deps.cluster.setPlayerCountUnknown(name, true);
    expect(await status()).toMatchObject({ legacyForwarding: true, playerCountUnknown: true });

    deps.cluster.setStartHangs(name, true);
    await deps.cluster.setDesiredState(name, 'Running');
    const { startTimeoutMs } = deps.cluster.options;
    for (let restart = 1; restart <= 3; restart++) {
      deps.clock.advance(startTimeoutMs);
      deps.cluster.tick();
      expect(await status()).toMatchObject({ phase: 'Starting', autoRestarts: restart });
    }
    deps.clock.advance(startTimeoutMs);
    deps.cluster.tick();
    expect(await status()).toMatchObject({ phase: 'Failed', startGaveUp: true, autoRestarts: 3 });
  });

  it('finds servers by host case-insensitively, with port and trailing dot, and 404s unknown hosts and system servers', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const { name } = addServer(deps, { subdomain: `host-${randomMcUuid().slice(0, 8)}` }).spec;
    const sub = deps.cluster.server(name)!.spec.subdomain;
    addSystemServer(deps, 'lobby');
    const byHost = (host: string) => internal.request(`/api/v1/servers/by-host/${encodeURIComponent(host)}`, { headers: bearer('proxy') });
    for (const host of [sub, sub.toUpperCase(), `${sub}.felis.test`, `${sub}.FELIS.test.`, `${sub}.felis.test:25565`, `${sub}:25565`]) {
      const res = await byHost(host);
      expect(res.status, host).toBe(200);
      expect(((await res.json()) as ServerInfo).name).toBe(name);
    }
    for (const host of ['nosuch.felis.test', 'lobby.felis.test', `x${sub}.felis.test`, 'nosuch']) {
      const res = await byHost(host);
      expect(res.status, host).toBe(404);
      expect((await errorOf(res)).code).toBe('not_found');
    }
    // A dotted host outside the root domain is the original's 400 bad_host.
    for (const host of [`${sub}.other.test`, 'example.com', `${sub}.felis.test.evil.example`]) {
      const res = await byHost(host);
      expect(res.status, host).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_host');
    }
  });

  it('wakes by policy: public for anyone, ownerOnly for the owner and staff, allowlist for listed players', async () => {
    const deps = createTestDeps(database());
    const wake = wakeOf(deps);
    const owner = await linkedPlayer(deps);
    const stranger = await linkedPlayer(deps);
    const admin = await linkedPlayer(deps, 'admin');
    const listed = randomMcUuid();

    const publicServer = addServer(deps, { autostartPolicy: 'public' }).spec.name;
    expect((await wake(publicServer, randomMcUuid())).status).toBe(202);

    const ownerOnly = addServer(deps, { autostartPolicy: 'ownerOnly' }).spec.name;
    const unclaimedOwnerOnly = addServer(deps, { autostartPolicy: 'ownerOnly' }).spec.name;
    await claimFor(deps, ownerOnly, owner.id);
    const refused = await wake(ownerOnly, stranger.mcUuid);
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe('forbidden');
    expect((await wake(ownerOnly, randomMcUuid())).status).toBe(403);
    expect((await wake(ownerOnly, owner.mcUuid)).status).toBe(202);
    const staffWoken = addServer(deps, { autostartPolicy: 'ownerOnly' }).spec.name;
    await claimFor(deps, staffWoken, owner.id);
    expect((await wake(staffWoken, admin.mcUuid)).status).toBe(202);
    // An ownerless ownerOnly server admits staff alone (the original): it is claimed first, then woken.
    const ownerless = await wake(unclaimedOwnerOnly, stranger.mcUuid);
    expect(ownerless.status).toBe(403);
    expect((await errorOf(ownerless)).code).toBe('forbidden');
    expect((await wake(unclaimedOwnerOnly, admin.mcUuid)).status).toBe(202);

    const allowlist = addServer(deps, { autostartPolicy: 'allowlist' }).spec.name;
    await claimFor(deps, allowlist, owner.id);
    await deps.database.db.insert(serverWakeAllowlist).values({ serverName: allowlist, mcUuid: listed, addedAt: deps.clock.now() });
    expect((await wake(allowlist, stranger.mcUuid)).status).toBe(403);
    expect((await wake(allowlist, listed.replaceAll('-', '').toUpperCase())).status).toBe(202);
  });

  it("judges a join's wake by the access rule's owner and staff: a disabled owner or admin is refused, a member's permissions do not wake in game, a staff owner wakes and sees its tile as its own", async () => {
    const deps = createTestDeps(database());
    const wake = wakeOf(deps);
    const owner = await linkedPlayer(deps);
    const member = await linkedPlayer(deps);
    const name = addServer(deps, { autostartPolicy: 'ownerOnly' }).spec.name;
    await claimFor(deps, name, owner.id);
    await deps.database.db
      .insert(serverMembers)
      .values({ serverName: name, userId: member.id, ownerId: owner.id, permissions: [...MEMBER_PERMISSIONS], addedAt: deps.clock.now(), addedBy: owner.id });
    const asMember = await wake(name, member.mcUuid);
    expect([asMember.status, (await errorOf(asMember)).code]).toEqual([403, 'forbidden']);
    const disabledAdmin = await createUser(deps, { role: 'admin', disabled: true });
    const disabledAdminUuid = randomMcUuid();
    await linkAccount(deps, { userId: disabledAdmin.id, mcUuid: disabledAdminUuid });
    expect((await wake(name, disabledAdminUuid)).status).toBe(403);
    await deps.database.db.update(users).set({ disabled: true }).where(eq(users.id, owner.id));
    expect((await wake(name, owner.mcUuid)).status).toBe(403);

    const staffOwner = await linkedPlayer(deps, 'admin');
    const theirs = addServer(deps, { autostartPolicy: 'ownerOnly' }).spec.name;
    await claimFor(deps, theirs, staffOwner.id);
    const menu = (await (await createTestApps(deps).internal.request(`/api/v1/internal/player/menu-access/${staffOwner.mcUuid}`, { headers: bearer('proxy') })).json()) as {
      servers: Record<string, string>;
    };
    expect([menu.servers[theirs], menu.servers[name]]).toEqual(['owner', 'wake']);
    expect((await wake(theirs, staffOwner.mcUuid)).status).toBe(202);
  });

  it("answers a ready server that is meant to run 202 {ready: true} before policy and cooldown (the original), spending no wake slot", async () => {
    const deps = createTestDeps(database());
    const wake = wakeOf(deps);
    const owner = await linkedPlayer(deps);
    const name = addServer(deps, { autostartPolicy: 'ownerOnly', desiredState: 'Running' }).spec.name;
    await claimFor(deps, name, owner.id);
    // Not ready yet: a stranger meets the policy.
    expect((await wake(name, randomMcUuid())).status).toBe(403);
    deps.clock.advance(deps.cluster.options.startDelayMs);
    deps.cluster.tick();
    for (let i = 0; i < 3; i++) {
      const res = await wake(name, randomMcUuid());
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ name, desiredState: 'Running', phase: 'Running', ready: true });
    }
    expect(await deps.database.db.select().from(serverWakes).where(eq(serverWakes.serverName, name))).toEqual([]);
  });

  it('refuses wakes: 404 unknown or system, 409 maintenance_in_progress, 409 start_failed, 503 at_capacity, 503 cluster down', async () => {
    const deps = createTestDeps(database());
    const wake = wakeOf(deps);
    const player = randomMcUuid();
    addSystemServer(deps, 'login');
    expect((await wake('nosuchserver', player)).status).toBe(404);
    expect((await wake('login', player)).status).toBe(404);

    const held = addServer(deps, { autostartPolicy: 'public' }).spec.name;
    await deps.database.db.insert(serverMaintenance).values({ serverName: held, reason: 'restore', since: deps.clock.now() });
    const maintenance = await wake(held, player);
    expect(maintenance.status).toBe(409);
    expect((await errorOf(maintenance)).code).toBe('maintenance_in_progress');

    const gaveUp = addServer(deps, { autostartPolicy: 'public', desiredState: 'Running' }).spec.name;
    deps.cluster.fail(gaveUp, true);
    const failed = await wake(gaveUp, player);
    expect(failed.status).toBe(409);
    expect((await errorOf(failed)).code).toBe('start_failed');
    expect(deps.cluster.server(gaveUp)!.status).toMatchObject({ phase: 'Failed', startGaveUp: true });

    const capacity = await deps.cluster.capacity();
    await writeSetting(deps.database.db, 'node_server_cap', capacity.running, deps.clock.now());
    const full = await wake(addServer(deps, { autostartPolicy: 'public' }).spec.name, player);
    expect(full.status).toBe(503);
    expect((await errorOf(full)).code).toBe('at_capacity');
    await writeSetting(deps.database.db, 'node_server_cap', 20, deps.clock.now());

    const next = addServer(deps, { autostartPolicy: 'public' }).spec.name;
    await wake('nosuchserver', player); // the cache is synced before the cluster goes away
    deps.cluster.setReachable(false);
    const down = await wake(next, player);
    expect(down.status).toBe(503);
    expect((await errorOf(down)).code).toBe('unavailable');
  });

  it('404s ready, join-event, status and menu for unknown and system servers; records a join', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    addSystemServer(deps, 'limbo');
    const body = jsonRequest('POST', { mc_uuid: randomMcUuid() }, bearer('proxy'));
    for (const name of ['nosuchserver', 'limbo']) {
      expect((await internal.request(`/api/v1/internal/servers/${name}/ready`, { method: 'POST', headers: bearer('proxy') })).status).toBe(404);
      expect((await internal.request(`/api/v1/internal/servers/${name}/join-event`, body)).status).toBe(404);
      expect((await internal.request(`/api/v1/internal/servers/${name}/status`, { headers: bearer('proxy') })).status).toBe(404);
      expect((await internal.request(`/api/v1/internal/servers/${name}/menu`, { headers: bearer('proxy') })).status).toBe(404);
    }
    const list = (await (await internal.request('/api/v1/servers', { headers: bearer('proxy') })).json()) as { servers: ServerInfo[] };
    expect(list.servers.find((s) => s.name === 'limbo')).toMatchObject({ idleStopSeconds: 0 });
  });

  it('refuses bad input with 400 (or 415), never 500', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const { name } = addServer(deps, { autostartPolicy: 'public' }).spec;
    const post = (path: string, init: RequestInit) => internal.request(path, init);
    const wakePath = `/api/v1/internal/servers/${name}/wake`;
    for (const body of [{}, { mc_uuid: 5 }, { mc_uuid: 'not-a-uuid' }, { mc_uuid: randomMcUuid(), extra: true }, '{"mc_uuid":', '[]']) {
      for (const path of [wakePath, `/api/v1/internal/servers/${name}/claim`, `/api/v1/internal/servers/${name}/join-event`]) {
        const res = await post(path, jsonRequest('POST', body, bearer('proxy')));
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
        expect((await errorOf(res)).code).toBe('bad_request');
      }
    }
    const noBody = await post(wakePath, { method: 'POST', headers: bearer('proxy') });
    expect(noBody.status).toBe(400);
    const text = await post(wakePath, { method: 'POST', headers: { ...bearer('proxy'), 'Content-Type': 'text/plain' }, body: 'x' });
    expect(text.status).toBe(415);
    for (const bad of ['Bad_Name', 'a'.repeat(41), '-dash', 'UPPER']) {
      const res = await internal.request(`/api/v1/internal/servers/${bad}/status`, { headers: bearer('proxy') });
      expect(res.status, bad).toBe(400);
    }
    const badMenu = await internal.request(`/api/v1/internal/servers/${name}/menu?mc_uuid=nope`, { headers: bearer('proxy') });
    expect(badMenu.status).toBe(400);
    const longHost = await internal.request(`/api/v1/servers/by-host/${'a'.repeat(256)}`, { headers: bearer('proxy') });
    expect(longHost.status).toBe(400);
  });

  it('replays the proxy’s Java client headers (h2c upgrade offer, Content-Length: 0 on GET)', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const { name } = addServer(deps, { autostartPolicy: 'public' }).spec;
    const java = {
      Connection: 'Upgrade, HTTP2-Settings',
      Upgrade: 'h2c',
      'HTTP2-Settings': 'AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA',
      'Content-Length': '0',
      Accept: 'application/json',
      ...bearer('proxy'),
    };
    expect((await internal.request(`/api/v1/internal/servers/${name}/status`, { headers: java })).status).toBe(200);
    const wake = await internal.request(`/api/v1/internal/servers/${name}/wake`, {
      method: 'POST',
      headers: { ...java, 'Content-Type': 'application/json', 'Content-Length': '49' },
      body: JSON.stringify({ mc_uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5' }),
    });
    expect(wake.status).toBe(202);
  });

  describe('tier matrix: proxy only', () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/servers'],
      ['GET', '/api/v1/servers/by-host/x.felis.test'],
      ['POST', '/api/v1/internal/servers/tier/ready'],
      ['POST', '/api/v1/internal/servers/tier/join-event', { mc_uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5' }],
      ['POST', '/api/v1/internal/servers/tier/wake', { mc_uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5' }],
      ['GET', '/api/v1/internal/servers/tier/status'],
      ['POST', '/api/v1/internal/servers/tier/claim', { mc_uuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5' }],
      ['GET', '/api/v1/internal/servers/tier/menu'],
      ['GET', '/api/v1/internal/player/menu-access/069a79f4-44e9-4726-a5be-fca90e38aaf5'],
    ];
    it.each(routes)('%s %s: 401 without or with a bad token, 403 wrong_caller for limbo, build, ops', async (method, path, body) => {
      const deps = createTestDeps(database());
      const { internal, external } = createTestApps(deps);
      const send = (headers: Record<string, string>) =>
        internal.request(path, body === undefined ? { method, headers } : jsonRequest(method, body, headers));
      const none = await send({});
      expect(none.status).toBe(401);
      expect((await errorOf(none)).code).toBe('unauthorized');
      expect((await send({ Authorization: `Bearer ${TOKENS.proxy}x` })).status).toBe(401);
      expect((await send({ Authorization: TOKENS.proxy })).status).toBe(401);
      for (const caller of ['limbo', 'build', 'ops'] as const) {
        const res = await send(bearer(caller));
        expect(res.status, caller).toBe(403);
        expect((await errorOf(res)).code).toBe('wrong_caller');
      }
      // Never on the external face with a service token.
      const outside = await external.request(path, body === undefined ? { method, headers: bearer('proxy') } : jsonRequest(method, body, bearer('proxy')));
      expect([401, 404, 405]).toContain(outside.status);
    });
  });
});
