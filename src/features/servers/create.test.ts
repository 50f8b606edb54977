import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OciRegistry } from '../../adapters/registry/oci.js';
import { createTestApps, createTestDeps, errorOf, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addSystemServer, uniqueServerName } from '../../../test/helpers/servers.js';
import { startRegistryStandIn, type RegistryStandIn } from '../../../test/helpers/registry.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { stringSetting } from './wakes/settings.js';
import { ownerOf } from './ownership/index.js';
import { serverClaims } from '../../db/schema/servers.js';
import { eq } from 'drizzle-orm';

describe('admin: creating servers and whitelisting images', () => {
  const database = useTestDatabase();
  let registry: RegistryStandIn;
  beforeAll(async () => {
    registry = await startRegistryStandIn();
  });
  afterAll(() => registry.close());

  async function console_(deps: TestDeps) {
    const admin = await createUser(deps, { role: 'admin' });
    const { headers } = await signIn(deps, { userId: admin.id });
    const { external } = createTestApps(deps);
    const send = (method: string, path: string, body?: unknown) =>
      external.request(path, {
        method,
        headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
    return { admin, send };
  }

  const withRegistry = () => createTestDeps(database(), { overrides: { registry: new OciRegistry({ url: registry.url }) } });

  it('creates a stopped server with the platform default image on a fresh install (name and subdomain only)', async () => {
    const deps = createTestDeps(database());
    const { send } = await console_(deps);
    const name = uniqueServerName('fresh');
    const res = await send('POST', '/api/v1/servers', { name, subdomain: name });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ name, subdomain: name, desiredState: 'Stopped' });
    const image = await stringSetting(deps.database.db, 'platform_default_image');
    expect(image).toBe('itzg/minecraft-server:java21');
    expect(deps.cluster.server(name)!.spec).toMatchObject({ image, desiredState: 'Stopped', memory: '4Gi', storage: '10Gi', cpu: '2' });
    const images = (await (await send('GET', '/api/v1/images')).json()) as { images: Array<{ image_ref: string; source: string }> };
    expect(images.images).toContainEqual(expect.objectContaining({ image_ref: image, source: 'platform', added_by: 'system', enabled: true }));
    const status = (await (await send('GET', '/api/v1/fleet')).json()) as { servers: Array<{ name: string; javaMemory?: string }> };
    expect(status.servers.find((s) => s.name === name)).toMatchObject({ javaMemory: '3072M', phase: 'Stopped' });
  });

  it('pins a platform-registry image to name:tag@sha256:<digest> and keeps the options', async () => {
    const deps = withRegistry();
    const { send } = await console_(deps);
    const digest = registry.push('mc/paper', '1.21');
    const image = `${registry.host}/mc/paper:1.21`;
    expect((await send('POST', '/api/v1/images', { image_ref: image })).status).toBe(201);
    const name = uniqueServerName('pin');
    const res = await send('POST', '/api/v1/servers', {
      name,
      subdomain: `${name}-play`,
      display_name: 'Pinned',
      image,
      storage: '20Gi',
      autostart_policy: 'public',
      resources: { cpu: '1500m', cpu_request: '500m', memory: '6Gi', memory_request: '4Gi' },
    });
    expect(res.status).toBe(201);
    expect(deps.cluster.server(name)!.spec).toMatchObject({
      image: `${image}@${digest}`,
      subdomain: `${name}-play`,
      displayName: 'Pinned',
      storage: '20Gi',
      memory: '6Gi',
      memoryRequest: '4Gi',
      cpu: '1500m',
      cpuRequest: '500m',
      autostartPolicy: 'public',
    });
  });

  it('answers 400 image_not_in_registry, 503 registry_unavailable and 400 image_not_whitelisted', async () => {
    const deps = withRegistry();
    const { send } = await console_(deps);
    registry.push('mc/vanished', '1');
    const vanished = `${registry.host}/mc/vanished:1`;
    expect((await send('POST', '/api/v1/images', { image_ref: vanished })).status).toBe(201);
    const missing = await send('POST', '/api/v1/images', { image_ref: `${registry.host}/mc/never:1` });
    expect(missing.status).toBe(400);
    expect((await errorOf(missing)).code).toBe('image_not_in_registry');

    const name = uniqueServerName('reg');
    registry.failWith(502);
    try {
      const down = await send('POST', '/api/v1/servers', { name, subdomain: name, image: vanished });
      expect(down.status).toBe(503);
      expect((await errorOf(down)).code).toBe('registry_unavailable');
      const downAdd = await send('POST', '/api/v1/images', { image_ref: `${registry.host}/mc/other:1` });
      expect(downAdd.status).toBe(503);
    } finally {
      registry.failWith(undefined);
    }
    registry.remove('mc/vanished', '1');
    const gone = await send('POST', '/api/v1/servers', { name, subdomain: name, image: vanished });
    expect(gone.status).toBe(400);
    expect((await errorOf(gone)).code).toBe('image_not_in_registry');
    const notListed = await send('POST', '/api/v1/servers', { name, subdomain: name, image: 'example/not-listed:1' });
    expect(notListed.status).toBe(400);
    expect((await errorOf(notListed)).code).toBe('image_not_whitelisted');
    expect(deps.cluster.server(name)).toBeUndefined();
  });

  it('refuses a disabled image, and whitelists again after PATCH enabled', async () => {
    const deps = createTestDeps(database());
    const { send } = await console_(deps);
    const image = `example/toggle-${uniqueServerName()}:1`;
    const added = await send('POST', '/api/v1/images', { image_ref: image });
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({ image_ref: image, source: 'manual', enabled: true, added_at: deps.clock.now().toISOString() });
    expect((await send('POST', '/api/v1/images', { image_ref: image })).status).toBe(409);
    const off = await send('PATCH', `/api/v1/images/${encodeURIComponent(image)}`, { enabled: false });
    expect(off.status).toBe(200);
    expect(await off.json()).toMatchObject({ image_ref: image, enabled: false });
    const name = uniqueServerName('off');
    expect((await send('POST', '/api/v1/servers', { name, subdomain: name, image })).status).toBe(400);
    expect((await send('PATCH', `/api/v1/images/${encodeURIComponent(image)}`, { enabled: true })).status).toBe(200);
    expect((await send('POST', '/api/v1/servers', { name, subdomain: name, image })).status).toBe(201);
    expect((await send('PATCH', `/api/v1/images/${encodeURIComponent('example/none:1')}`, { enabled: true })).status).toBe(404);
  });

  it('refuses reserved names (400 bad_name) and taken names or subdomains (409)', async () => {
    const deps = createTestDeps(database());
    const { send } = await console_(deps);
    addSystemServer(deps, 'lobby');
    for (const body of [
      { name: 'lobby', subdomain: 'lobby2' },
      { name: 'limbo', subdomain: 'limbo2' },
      { name: uniqueServerName(), subdomain: 'login' },
      { name: uniqueServerName(), subdomain: 'api' },
      { name: uniqueServerName(), subdomain: 'console' },
    ]) {
      const res = await send('POST', '/api/v1/servers', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_name');
    }
    const name = uniqueServerName('dup');
    expect((await send('POST', '/api/v1/servers', { name, subdomain: name })).status).toBe(201);
    expect((await send('POST', '/api/v1/servers', { name, subdomain: `${name}x` })).status).toBe(409);
    expect((await send('POST', '/api/v1/servers', { name: `${name}x`, subdomain: name })).status).toBe(409);
  });

  it('refuses (409) the name of a server the cluster forgot while its claim remains, so nobody is handed the old owner\'s server (issue 43 item 12)', async () => {
    const deps = createTestDeps(database());
    const { send } = await console_(deps);
    const player = await createUser(deps);
    const name = uniqueServerName('forgot');
    expect((await send('POST', '/api/v1/servers', { name, subdomain: name })).status).toBe(201);
    await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId: player.id, claimedAt: deps.clock.now() });
    // The simulated cluster of a restarted service on PostgreSQL: the server is gone, its claim is not.
    deps.cluster.deleteServer(name);
    const res = await send('POST', '/api/v1/servers', { name, subdomain: name });
    expect(res.status).toBe(409);
    expect(await errorOf(res)).toMatchObject({ code: 'conflict', message: expect.stringContaining('earlier server') });
    expect(deps.cluster.server(name)).toBeUndefined();
    expect(await ownerOf(deps.database.db, name)).toBe(player.id);
    // Once its rows are gone (a retirement, or the cluster's deletion forgotten), the name is free.
    await deps.database.db.delete(serverClaims).where(eq(serverClaims.serverName, name));
    expect((await send('POST', '/api/v1/servers', { name, subdomain: name })).status).toBe(201);
  });

  it('refuses bad bodies with 400 (wrong types, unknown fields, bad names, bad quantities, bad image refs), 415 for text', async () => {
    const deps = createTestDeps(database());
    const { send } = await console_(deps);
    const name = uniqueServerName('bad');
    for (const body of [
      {},
      { name },
      { name: 5, subdomain: name },
      { name, subdomain: name, extra: 1 },
      { name: 'Bad_Name', subdomain: name },
      { name, subdomain: 'has.dot' },
      { name, subdomain: name, memory: 'lots' },
      { name, subdomain: name, resources: { cpu: '2', gpu: '1' } },
      { name, subdomain: name, resources: { cpu: 2 } },
      { name, subdomain: name, autostart_policy: 'everyone' },
      { name, subdomain: name, memory: '2Gi', resources: { memory: '4Gi' } },
      { name, subdomain: name, image: 'UPPER/case' },
      '{"name":',
      '[]',
    ]) {
      const res = await send('POST', '/api/v1/servers', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    for (const body of [{}, { image_ref: 5 }, { image_ref: 'a b' }, { image_ref: 'x/y:1', extra: true }]) {
      expect((await send('POST', '/api/v1/images', body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await send('PATCH', `/api/v1/images/${encodeURIComponent('x/y:1')}`, { enabled: 'yes' })).status).toBe(400);
    const admin = await createUser(deps, { role: 'admin' });
    const { headers } = await signIn(deps, { userId: admin.id });
    const text = await createTestApps(deps).external.request('/api/v1/servers', {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'text/plain' },
      body: JSON.stringify({ name, subdomain: name }),
    });
    expect(text.status).toBe(415);
    expect(deps.cluster.server(name)).toBeUndefined();
  });
});
