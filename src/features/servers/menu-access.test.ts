import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, TOKENS, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { RawConnection, javaClientRequest } from '../../../test/helpers/raw-http.js';
import { addServer, addSystemServer, randomMcUuid, uniqueServerName } from '../../../test/helpers/servers.js';
import { createUser, linkAccount } from '../../../test/helpers/sessions.js';
import { serverClaims, serverRetirements, serverWakeAllowlist } from '../../db/schema/servers.js';
import { serve, type Listening } from '../../runtime/serve.js';

async function claimFor(deps: TestDeps, name: string, userId: string) {
  await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId, claimedAt: deps.clock.now() });
}

describe('menu-access and claim for the proxy', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let server: Listening;

  beforeAll(async () => {
    deps = createTestDeps(database());
    server = await serve({ fetch: createTestApps(deps).internal.fetch, port: 0, host: '127.0.0.1', log: deps.log });
  });
  afterAll(async () => {
    await server?.close(100);
  });

  /** A world of tiles like the original's own test: one per verdict. */
  async function world() {
    const me = await createUser(deps);
    const other = await createUser(deps);
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: me.id, mcUuid });
    const tile = (policy?: 'public' | 'ownerOnly' | 'allowlist') => addServer(deps, { name: uniqueServerName('m'), ...(policy ? { autostartPolicy: policy } : {}) }).spec.name;
    const names = {
      pub: tile('public'),
      mine: tile('ownerOnly'),
      theirs: tile('ownerOnly'),
      unset: tile(),
      listed: tile('allowlist'),
      unlisted: tile('allowlist'),
      ownerless: tile('ownerOnly'),
      gone: tile('public'),
      broken: tile('public'),
      brokenStopped: tile('public'),
    };
    for (const n of [names.pub, names.theirs, names.unset, names.listed, names.unlisted, names.gone, names.broken, names.brokenStopped]) await claimFor(deps, n, other.id);
    await claimFor(deps, names.mine, me.id);
    await deps.database.db.insert(serverWakeAllowlist).values({ serverName: names.listed, mcUuid, addedAt: deps.clock.now() });
    await deps.database.db.insert(serverRetirements).values({ serverName: names.gone, requestedAt: deps.clock.now(), requestedBy: other.id, delete: false });
    await deps.cluster.setDesiredState(names.broken, 'Running');
    deps.cluster.fail(names.broken, true);
    deps.cluster.fail(names.brokenStopped, true);
    return { me, mcUuid, names };
  }

  it('answers a verdict per tile, as the wake would decide, to the Java client’s exact request', async () => {
    addSystemServer(deps, 'lobby');
    const { mcUuid, names } = await world();
    const conn = await RawConnection.open(server.port);
    try {
      await conn.write(javaClientRequest({ method: 'GET', path: `/api/v1/internal/player/menu-access/${mcUuid}`, port: server.port, token: TOKENS.proxy }));
      const res = await conn.readResponse();
      expect(res.statusLine).toBe('HTTP/1.1 200 OK');
      expect(res.headers.upgrade).toBeUndefined();
      const { servers } = JSON.parse(res.body) as { servers: Record<string, string> };
      expect(servers).not.toHaveProperty('lobby');
      expect({
        pub: servers[names.pub],
        mine: servers[names.mine],
        theirs: servers[names.theirs],
        unset: servers[names.unset],
        listed: servers[names.listed],
        unlisted: servers[names.unlisted],
        ownerless: servers[names.ownerless],
        gone: servers[names.gone],
        broken: servers[names.broken],
        brokenStopped: servers[names.brokenStopped],
      }).toEqual({
        pub: 'wake',
        mine: 'owner',
        theirs: 'owner_only',
        unset: 'owner_only',
        listed: 'wake',
        unlisted: 'allowlist',
        // An ownerless ownerOnly server admits nobody but staff, as the wake does (the original's owner_only).
        ownerless: 'owner_only',
        gone: 'retiring',
        broken: 'start_failed',
        brokenStopped: 'wake',
      });
      // The same connection carries the next call, as the Java client reuses it.
      await conn.write(javaClientRequest({ method: 'GET', path: '/api/v1/internal/player/menu-access/not-a-uuid', port: server.port, token: TOKENS.proxy }));
      const bad = await conn.readResponse();
      expect(bad.status).toBe(400);
      expect((JSON.parse(bad.body) as { error: { code: string } }).error.code).toBe('bad_request');
    } finally {
      conn.close();
    }
  });

  it('treats staff as able to wake any tile that is not retiring or failed, and an unlinked UUID as owning nothing', async () => {
    const { names } = await world();
    const staff = await createUser(deps, { role: 'admin' });
    const staffUuid = randomMcUuid();
    await linkAccount(deps, { userId: staff.id, mcUuid: staffUuid });
    const ask = async (uuid: string) =>
      ((await (await createTestApps(deps).internal.request(`/api/v1/internal/player/menu-access/${uuid}`, { headers: bearer('proxy') })).json()) as {
        servers: Record<string, string>;
      }).servers;
    const asStaff = await ask(staffUuid);
    expect([asStaff[names.theirs], asStaff[names.unlisted], asStaff[names.ownerless], asStaff[names.gone], asStaff[names.broken]]).toEqual([
      'wake',
      'wake',
      'wake',
      'retiring',
      'start_failed',
    ]);
    const stranger = await ask(randomMcUuid().toUpperCase());
    expect([stranger[names.mine], stranger[names.pub], stranger[names.listed]]).toEqual(['owner_only', 'wake', 'allowlist']);
  });

  it('claims over the Java client’s exact request: 412 not_linked for an unlinked player, 200 claimed true once linked', async () => {
    const name = addServer(deps).spec.name;
    const player = randomMcUuid();
    const body = `{"mc_uuid":"${player}"}`;
    const conn = await RawConnection.open(server.port);
    try {
      await conn.write(javaClientRequest({ method: 'POST', path: `/api/v1/internal/servers/${name}/claim`, port: server.port, token: TOKENS.proxy, body }));
      const refused = await conn.readResponse();
      expect(refused.status).toBe(412);
      const envelope = JSON.parse(refused.body) as { error: { code: string; request_id: string } };
      expect(envelope.error.code).toBe('not_linked');
      expect(envelope.error.request_id).toBe(refused.headers['x-request-id']);

      const user = await createUser(deps);
      await linkAccount(deps, { userId: user.id, mcUuid: player });
      await conn.write(javaClientRequest({ method: 'POST', path: `/api/v1/internal/servers/${name}/claim`, port: server.port, token: TOKENS.proxy, body }));
      const claimed = await conn.readResponse();
      expect(claimed.status).toBe(200);
      expect(JSON.parse(claimed.body)).toEqual({ name, claimed: true });
      await conn.write(javaClientRequest({ method: 'GET', path: `/api/v1/internal/player/menu-access/${player}`, port: server.port, token: TOKENS.proxy }));
      const after = JSON.parse((await conn.readResponse()).body) as { servers: Record<string, string> };
      expect(after.servers[name]).toBe('owner');
    } finally {
      conn.close();
    }
  });

  it("wakes over the Java client's exact request: a ready server 202 ready:true for anyone, an ownerless ownerOnly one 403 forbidden, a retiring one 409 server_retiring", async () => {
    const stranger = randomMcUuid();
    const body = `{"mc_uuid":"${stranger}"}`;
    const ready = addServer(deps, { name: uniqueServerName('r'), autostartPolicy: 'ownerOnly', desiredState: 'Running' }).spec.name;
    await claimFor(deps, ready, (await createUser(deps)).id);
    deps.clock.advance(deps.cluster.options.startDelayMs);
    deps.cluster.tick();
    const ownerless = addServer(deps, { name: uniqueServerName('o'), autostartPolicy: 'ownerOnly' }).spec.name;
    const retiring = addServer(deps, { name: uniqueServerName('g'), autostartPolicy: 'public' }).spec.name;
    const retiree = await createUser(deps);
    await deps.database.db.insert(serverRetirements).values({ serverName: retiring, requestedAt: deps.clock.now(), requestedBy: retiree.id, delete: false });
    const conn = await RawConnection.open(server.port);
    try {
      const wake = async (name: string) => {
        await conn.write(javaClientRequest({ method: 'POST', path: `/api/v1/internal/servers/${name}/wake`, port: server.port, token: TOKENS.proxy, body }));
        return conn.readResponse();
      };
      const up = await wake(ready);
      expect(up.statusLine).toBe('HTTP/1.1 202 Accepted');
      expect(JSON.parse(up.body)).toEqual({ name: ready, desiredState: 'Running', phase: 'Running', ready: true });
      const refused = await wake(ownerless);
      expect(refused.status).toBe(403);
      expect((JSON.parse(refused.body) as { error: { code: string } }).error.code).toBe('forbidden');
      const gone = await wake(retiring);
      expect(gone.status).toBe(409);
      expect((JSON.parse(gone.body) as { error: { code: string } }).error.code).toBe('server_retiring');
    } finally {
      conn.close();
    }
  });

  it('shows an ownerless server as claimable in its menu, unless its retirement is pending', async () => {
    const free = addServer(deps, { name: uniqueServerName('f') }).spec.name;
    const leaving = addServer(deps, { name: uniqueServerName('l') }).spec.name;
    const staff = await createUser(deps, { role: 'admin' });
    await deps.database.db.insert(serverRetirements).values({ serverName: leaving, requestedAt: deps.clock.now(), requestedBy: staff.id, delete: true });
    const menu = async (name: string) => {
      const res = await createTestApps(deps).internal.request(`/api/v1/internal/servers/${name}/menu`, { headers: bearer('proxy') });
      expect(res.status).toBe(200);
      return (await res.json()) as { claimable: boolean };
    };
    expect(await menu(free)).toMatchObject({ claimable: true });
    expect(await menu(leaving)).toMatchObject({ claimable: false });
  });

  it('answers 503 while the cluster cannot be listed', async () => {
    const d = createTestDeps(database());
    d.cluster.setReachable(false);
    const res = await createTestApps(d).internal.request(`/api/v1/internal/player/menu-access/${randomMcUuid()}`, { headers: bearer('proxy') });
    expect(res.status).toBe(503);
  });

  describe('from memory (SESSION_CACHE_MS on, as a service runs)', () => {
    const kept = () => {
      // The suite's fleet and cache, with a menu kept as a service keeps it.
      const d = createTestDeps(database(), { env: { SESSION_CACHE_MS: '1000' }, overrides: { clock: deps.clock, cluster: deps.cluster, serverCache: deps.serverCache } });
      return { d, internal: createTestApps(d).internal };
    };
    const read = async (internal: ReturnType<typeof createTestApps>['internal'], path: string) => {
      const res = await internal.request(path, { headers: bearer('proxy') });
      expect(res.status).toBe(200);
      return { text: await res.text(), type: res.headers.get('content-type') };
    };
    /** What `c.json(value, 200)` writes, which the routes answered with before they kept their text. */
    const asCJson = async (value: unknown) => {
      const res = await new Hono().get('/', (c) => c.json(value as object, 200)).request('/');
      return { text: await res.text(), type: res.headers.get('content-type') };
    };
    /** `path` answered with every statement refused meanwhile: it asked the database nothing. */
    const readWithNoQuery = async (internal: ReturnType<typeof createTestApps>['internal'], path: string) => {
      database().guard.hold('no statement may run');
      try {
        return await read(internal, path);
      } finally {
        database().guard.release();
      }
    };

    it('answers byte for byte what c.json wrote, the second time without a query', async () => {
      const { d, internal } = kept();
      const { mcUuid, names } = await world();
      const info = d.serverCache.get(names.mine)!.info;
      const menuPath = `/api/v1/internal/servers/${names.mine}/menu`;
      const expected = await asCJson({ name: names.mine, phase: info.phase, ready: info.ready, playersOnline: info.playersOnline, playersMax: info.playersMax, claimable: false });
      expect(await read(internal, menuPath)).toEqual(expected);
      expect(await readWithNoQuery(internal, menuPath)).toEqual(expected);

      const accessPath = `/api/v1/internal/player/menu-access/${mcUuid}`;
      const first = await read(internal, accessPath);
      expect(first).toEqual(await asCJson(JSON.parse(first.text)));
      expect(JSON.parse(first.text).servers[names.mine]).toBe('owner');
      expect(await readWithNoQuery(internal, accessPath)).toEqual(first);
    });

    it('shows a change of the server at once, and a claim made through this replica from the next request', async () => {
      const { d, internal } = kept();
      const name = addServer(deps, { name: uniqueServerName('k'), autostartPolicy: 'ownerOnly' }).spec.name;
      const player = randomMcUuid();
      const owner = await createUser(deps);
      await linkAccount(deps, { userId: owner.id, mcUuid: player });
      const menu = async () => JSON.parse((await read(internal, `/api/v1/internal/servers/${name}/menu`)).text) as { claimable: boolean; phase: string };
      const verdict = async () => (JSON.parse((await read(internal, `/api/v1/internal/player/menu-access/${player}`)).text) as { servers: Record<string, string> }).servers[name];
      expect(await menu()).toMatchObject({ claimable: true, phase: 'Stopped' });
      expect(await verdict()).toBe('owner_only');

      // The server's own figures come from the watch-fed cache, never from what was kept.
      await d.cluster.setDesiredState(name, 'Running');
      await expect.poll(async () => (await menu()).phase).not.toBe('Stopped');

      // A claim written behind this replica's back (as another replica would) is not seen yet...
      await claimFor(deps, name, owner.id);
      expect(await menu()).toMatchObject({ claimable: true });
      expect(await verdict()).toBe('owner_only');
      // ...while any write answered here forgets what was kept.
      const written = await internal.request(`/api/v1/internal/servers/${name}/join-event`, { method: 'POST', headers: { ...bearer('proxy'), 'Content-Type': 'application/json' }, body: JSON.stringify({ mc_uuid: player }) });
      expect(written.status).toBe(204);
      expect(await menu()).toMatchObject({ claimable: false });
      expect(await verdict()).toBe('owner');
    });

    it('counts a change made elsewhere within SESSION_CACHE_MS', async () => {
      const { internal } = kept();
      const name = addServer(deps, { name: uniqueServerName('e') }).spec.name;
      const menu = async () => (JSON.parse((await read(internal, `/api/v1/internal/servers/${name}/menu`)).text) as { claimable: boolean }).claimable;
      expect(await menu()).toBe(true);
      const owner = await createUser(deps);
      await claimFor(deps, name, owner.id);
      const changed = performance.now();
      await expect.poll(menu, { timeout: 5_000, interval: 50 }).toBe(false);
      // The bound is 1 s from the kept read; polling and a busy machine add a little.
      expect(performance.now() - changed).toBeLessThan(2_500);
    });
  });
});
