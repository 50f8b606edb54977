import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OciRegistry } from '../../adapters/registry/oci.js';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { startRegistryStandIn, type RegistryStandIn } from '../../../test/helpers/registry.js';
import { addServer, randomMcUuid, uniqueServerName } from '../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { serverClaims, serverRetirements, serverWakeAllowlist } from '../../db/schema/servers.js';
import { RETIREMENT_SWEEP, retirementRoundOn, sweepRetirements } from './retirement-sweep.js';
import { HEARTBEAT_BEAT_MS, HEARTBEAT_TTL_MS, LEASE_KEYS, ROUND_LEASE_MS, takeLease } from '../../coordination/index.js';
import { leases } from '../../db/schema/coordination.js';
import { SERVER_SETTINGS } from './wakes/settings.js';

async function staffConsole(deps: TestDeps) {
  const admin = await createUser(deps, { role: 'admin' });
  return (await signIn(deps, { userId: admin.id })).headers;
}

const send = (deps: TestDeps, method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  createTestApps(deps).external.request(path, body === undefined ? { method, headers } : jsonRequest(method, body, headers));

async function ownedServer(deps: TestDeps, spec: Parameters<typeof addServer>[1] = {}) {
  const owner = await createUser(deps);
  const name = addServer(deps, spec).spec.name;
  await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId: owner.id, claimedAt: deps.clock.now() });
  return { name, owner, headers: (await signIn(deps, { userId: owner.id })).headers };
}

describe('server administration: edit, wake allowlist, retirement, the panel’s spellings', () => {
  const database = useTestDatabase();
  let registry: RegistryStandIn;
  beforeAll(async () => {
    registry = await startRegistryStandIn();
  });
  afterAll(() => registry.close());

  it('PATCH changes the spec; an image change needs confirmImageChange and is pinned like create', async () => {
    const deps = createTestDeps(database(), { overrides: { registry: new OciRegistry({ url: registry.url }) } });
    const headers = await staffConsole(deps);
    const name = addServer(deps).spec.name;
    const path = `/api/v1/servers/${name}`;
    const res = await send(deps, 'PATCH', path, headers, {
      displayName: 'Renamed',
      autostartPolicy: 'allowlist',
      idleStopSeconds: 600,
      resources: { cpu: '3', memory: '6Gi', memoryRequest: '4Gi' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name, desiredState: 'Stopped' });
    expect(deps.cluster.server(name)!.spec).toMatchObject({ displayName: 'Renamed', autostartPolicy: 'allowlist', cpu: '3', memory: '6Gi', memoryRequest: '4Gi', idleStopSeconds: 600 });

    const digest = registry.push('mc/fabric', '2');
    const image = `${registry.host}/mc/fabric:2`;
    const staff = await staffConsole(deps);
    expect((await send(deps, 'POST', '/api/v1/images', staff, { image_ref: image })).status).toBe(201);
    const unconfirmed = await send(deps, 'PATCH', path, headers, { image });
    expect(unconfirmed.status).toBe(400);
    expect((await errorOf(unconfirmed)).code).toBe('bad_request');
    expect((await send(deps, 'PATCH', path, headers, { image, confirmImageChange: true })).status).toBe(200);
    expect(deps.cluster.server(name)!.spec.image).toBe(`${registry.host}/mc/fabric:2@${digest}`);
    const notListed = await send(deps, 'PATCH', path, headers, { image: 'example/unlisted:1', confirmImageChange: true });
    expect((await errorOf(notListed)).code).toBe('image_not_whitelisted');
    for (const body of [{ memory: '1Gi', resources: { memory: '2Gi' } }, { idleStopSeconds: -1 }, { surprise: 1 }, { resources: { cpu_request: '1' } }]) {
      const bad = await send(deps, 'PATCH', path, headers, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    expect((await send(deps, 'PATCH', `/api/v1/servers/${uniqueServerName()}`, headers, { displayName: 'x' })).status).toBe(404);
  });

  it('POST /servers takes the original panel’s camelCase spellings, but not a field in both', async () => {
    const deps = createTestDeps(database());
    const headers = await staffConsole(deps);
    const name = uniqueServerName('camel');
    const res = await send(deps, 'POST', '/api/v1/servers', headers, {
      name,
      subdomain: name,
      displayName: 'Camel',
      autostartPolicy: 'public',
      resources: { cpuRequest: '500m', memoryRequest: '1Gi' },
    });
    expect(res.status).toBe(201);
    expect(deps.cluster.server(name)!.spec).toMatchObject({ displayName: 'Camel', autostartPolicy: 'public', cpuRequest: '500m', memoryRequest: '1Gi' });
    const both = await send(deps, 'POST', '/api/v1/servers', headers, { name: uniqueServerName(), subdomain: uniqueServerName(), display_name: 'a', displayName: 'b' });
    expect(both.status).toBe(400);
    expect((await errorOf(both)).code).toBe('bad_request');
  });

  it('manages the wake allowlist (owner or staff), and the allowlist policy follows it', async () => {
    const deps = createTestDeps(database());
    const { name, headers } = await ownedServer(deps, { autostartPolicy: 'allowlist' });
    const player = randomMcUuid();
    const path = `/api/v1/servers/${name}/allowlist`;
    const wake = () => createTestApps(deps).internal.request(`/api/v1/internal/servers/${name}/wake`, jsonRequest('POST', { mc_uuid: player }, bearer('proxy')));
    expect((await wake()).status).toBe(403);
    expect((await send(deps, 'PUT', `${path}/${player.replaceAll('-', '').toUpperCase()}`, headers, { can_wake: true })).status).toBe(204);
    const list = await send(deps, 'GET', path, headers);
    expect(await list.json()).toEqual({ server: name, entries: [{ mc_uuid: player, can_wake: true, added_at: deps.clock.now().toISOString() }] });
    expect((await wake()).status).toBe(202);
    expect((await send(deps, 'PUT', `${path}/${player}`, headers, { can_wake: false })).status).toBe(204);
    // The row stays with its wake right taken away (the original), and the allowlist policy follows it.
    expect(await (await send(deps, 'GET', path, headers)).json()).toEqual({
      server: name,
      entries: [{ mc_uuid: player, can_wake: false, added_at: deps.clock.now().toISOString() }],
    });
    expect((await wake()).status).toBe(403);
    // A join does not give the right back: the owner's choice stands.
    const join = await createTestApps(deps).internal.request(`/api/v1/internal/servers/${name}/join-event`, jsonRequest('POST', { mc_uuid: player }, bearer('proxy')));
    expect(join.status).toBe(204);
    expect(await deps.database.db.select({ canWake: serverWakeAllowlist.canWake }).from(serverWakeAllowlist).where(eq(serverWakeAllowlist.serverName, name))).toEqual([{ canWake: false }]);
    // Another player may neither read nor change it; staff may.
    const stranger = (await signIn(deps, { userId: (await createUser(deps)).id })).headers;
    expect((await send(deps, 'GET', path, stranger)).status).toBe(403);
    expect((await send(deps, 'PUT', `${path}/${player}`, stranger, { can_wake: true })).status).toBe(403);
    const staff = await createUser(deps, { role: 'admin' });
    expect((await send(deps, 'GET', path, (await signIn(deps, { userId: staff.id, host: 'panel.felis.test' })).headers)).status).toBe(200);
    expect((await send(deps, 'PUT', `${path}/not-a-uuid`, headers, { can_wake: true })).status).toBe(400);
    expect((await send(deps, 'PUT', `${path}/${player}`, headers, { can_wake: 'yes' })).status).toBe(400);
  });

  it('retires a server: wakes refused, the sweep stops it then releases it (or deletes it); a retirement can be called off', async () => {
    const deps = createTestDeps(database());
    const { name, headers } = await ownedServer(deps, { autostartPolicy: 'public', desiredState: 'Running' });
    const path = `/api/v1/servers/${name}/retirement`;
    expect((await send(deps, 'PUT', path, headers, { confirm: false, delete: false })).status).toBe(400);
    // `confirm` repeats the server's name (the original); anything else is 400 confirm_mismatch.
    const mismatch = await send(deps, 'PUT', path, headers, { confirm: `${name}x`, delete: false });
    expect(mismatch.status).toBe(400);
    expect((await errorOf(mismatch)).code).toBe('confirm_mismatch');
    // Deleting is staff's: the owner may only give the server up (the original's 403 forbidden).
    const ownerDelete = await send(deps, 'PUT', path, headers, { confirm: name, delete: true });
    expect(ownerDelete.status).toBe(403);
    expect((await errorOf(ownerDelete)).code).toBe('forbidden');
    const res = await send(deps, 'PUT', path, headers, { confirm: name, delete: false });
    expect(res.status).toBe(200);
    const retiring = { requested_at: deps.clock.now().toISOString(), delete: false };
    expect(await res.json()).toEqual({ name, retiring });
    // The server's status and the lists show it retiring.
    const status = await createTestApps(deps).external.request(`/api/v1/servers/${name}/status`, { headers });
    expect(await status.json()).toMatchObject({ name, retiring });
    const mine = (await (await createTestApps(deps).external.request('/api/v1/me/servers', { headers })).json()) as { servers: Array<{ name: string }> };
    expect(mine.servers.find((s) => s.name === name)).toMatchObject({ retiring });
    const staff = await signIn(deps, { userId: (await createUser(deps, { role: 'admin' })).id });
    const fleetRows = (await (await createTestApps(deps).external.request('/api/v1/fleet', { headers: staff.headers })).json()) as { servers: Array<{ name: string }> };
    expect(fleetRows.servers.find((s) => s.name === name)).toMatchObject({ retiring });
    const refused = await createTestApps(deps).internal.request(`/api/v1/internal/servers/${name}/wake`, jsonRequest('POST', { mc_uuid: randomMcUuid() }, bearer('proxy')));
    expect(refused.status).toBe(409);
    expect((await errorOf(refused)).code).toBe('server_retiring');
    // First round: asked to stop. Once stopped, the next round releases it.
    expect(await sweepRetirements(deps)).toEqual([]);
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
    deps.clock.advance(60_000);
    deps.cluster.tick();
    expect(await sweepRetirements(deps)).toContain(name);
    expect(await deps.database.db.select().from(serverClaims).where(eq(serverClaims.serverName, name))).toEqual([]);
    expect(deps.cluster.server(name)).toBeDefined();

    // With delete (staff's), the server leaves the cluster; a called-off retirement does nothing.
    const gone = await ownedServer(deps);
    expect((await send(deps, 'PUT', `/api/v1/servers/${gone.name}/retirement`, staff.headers, { confirm: gone.name, delete: true })).status).toBe(200);
    const kept = await ownedServer(deps);
    expect((await send(deps, 'PUT', `/api/v1/servers/${kept.name}/retirement`, staff.headers, { confirm: kept.name, delete: true })).status).toBe(200);
    // The owner may not call off a deletion staff asked for; staff may.
    expect((await send(deps, 'DELETE', `/api/v1/servers/${kept.name}/retirement`, kept.headers)).status).toBe(403);
    expect((await send(deps, 'DELETE', `/api/v1/servers/${kept.name}/retirement`, staff.headers)).status).toBe(204);
    expect(await sweepRetirements(deps)).toContain(gone.name);
    expect(deps.cluster.server(gone.name)).toBeUndefined();
    expect(deps.cluster.server(kept.name)).toBeDefined();
    expect(await deps.database.db.select().from(serverRetirements).where(eq(serverRetirements.serverName, kept.name))).toEqual([]);
    // Not the owner: 403.
    const stranger = (await signIn(deps, { userId: (await createUser(deps)).id })).headers;
    expect((await send(deps, 'PUT', `/api/v1/servers/${kept.name}/retirement`, stranger, { confirm: kept.name, delete: false })).status).toBe(403);
  });
});

describe('the retirement sweep on several replicas', () => {
  const database = useTestDatabase();

  it('runs a round only on the replica holding its lease; another takes over once the holder stops renewing', async () => {
    const deps = createTestDeps(database());
    const intervalMs = SERVER_SETTINGS.retirementSweepSeconds.fallback * 1000;
    // Another replica holds this round's lease: this one skips it.
    await takeLease(deps.database.db, deps.clock.now(), { key: LEASE_KEYS.loop(RETIREMENT_SWEEP), holder: 'other', purpose: RETIREMENT_SWEEP, ttlMs: intervalMs });
    expect(await retirementRoundOn(deps, 'this')).toBeUndefined();
    // The other replica died: its lease lapses and this one runs the next round.
    deps.clock.advance(Math.max(intervalMs, ROUND_LEASE_MS) + 1);
    expect(await retirementRoundOn(deps, 'this')).toEqual([]);
  });

  it('a survivor carries out a retirement asked of it once it has seen the round holder die, not a minute later (issue 43 item 13)', async () => {
    const a = createTestDeps(database(), { env: { POD_NAME: 'felis-a' } });
    const b = createTestDeps(database(), { env: { POD_NAME: 'felis-b' }, overrides: { cluster: a.cluster } });
    await a.database.db.delete(leases).where(eq(leases.key, LEASE_KEYS.loop(RETIREMENT_SWEEP)));
    await a.heartbeat.beat();
    await b.heartbeat.beat();
    // A runs a round (its lease covers a minute), then is killed: no goodbye, no more beats.
    expect(await retirementRoundOn(a, a.replica)).toEqual([]);
    const { name, headers } = await ownedServer(b);
    expect((await send(b, 'PUT', `/api/v1/servers/${name}/retirement`, headers, { confirm: name, delete: false })).status).toBe(200);
    expect(await retirementRoundOn(b, b.replica)).toBeUndefined();
    // B watches A's heartbeat stand still for its TTL (B's own clock, beating every 2 s).
    for (let t = 0; t <= HEARTBEAT_TTL_MS; t += HEARTBEAT_BEAT_MS) {
      b.clock.advance(HEARTBEAT_BEAT_MS);
      await b.heartbeat.beat();
    }
    expect(b.heartbeat.deadReplicas()).toEqual([a.replica]);
    // 12 s after the kill, far inside the round's 60 s lease: B's round runs and retires the server.
    expect(await retirementRoundOn(b, b.replica)).toEqual([name]);
    expect(await b.database.db.select().from(serverClaims).where(eq(serverClaims.serverName, name))).toEqual([]);
  });
});
