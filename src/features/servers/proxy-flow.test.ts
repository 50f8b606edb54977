import { describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, randomMcUuid } from '../../../test/helpers/servers.js';
import type { ServerInfo } from './core/schema.js';

describe('the proxy flow on the simulated cluster', () => {
  const database = useTestDatabase();

  it('lists, finds by host, wakes, polls status until ready, reports ready and a join, reads the menu', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const server = addServer(deps, { autostartPolicy: 'public', displayName: 'Survival' });
    const name = server.spec.name;
    const player = randomMcUuid();
    const proxy = bearer('proxy');

    const list = await internal.request('/api/v1/servers', { headers: proxy });
    expect(list.status).toBe(200);
    const listed = ((await list.json()) as { servers: ServerInfo[] }).servers;
    expect(listed.find((s) => s.name === name)).toMatchObject({ phase: 'Stopped', ready: false, desiredState: 'Stopped' });

    const found = await internal.request(`/api/v1/servers/by-host/${name.toUpperCase()}.Felis.Test.:25565`, { headers: proxy });
    expect(found.status).toBe(200);
    const info = (await found.json()) as ServerInfo;
    expect(info).toMatchObject({ name, subdomain: name, phase: 'Stopped', displayName: 'Survival', autostartPolicy: 'public' });

    const wake = await internal.request(`/api/v1/internal/servers/${name}/wake`, jsonRequest('POST', { mc_uuid: player }, proxy));
    expect(wake.status).toBe(202);
    expect(await wake.json()).toEqual({ name, desiredState: 'Running', phase: 'Starting', ready: false });

    const statusOf = async () => {
      const res = await internal.request(`/api/v1/internal/servers/${name}/status`, { headers: proxy });
      expect(res.status).toBe(200);
      return (await res.json()) as ServerInfo;
    };
    expect(await statusOf()).toMatchObject({ phase: 'Starting', ready: false });
    let polls = 0;
    while (!(await statusOf()).ready) {
      deps.clock.advance(1_000);
      deps.cluster.tick();
      polls += 1;
      expect(polls).toBeLessThan(60);
    }
    expect(polls).toBe(deps.cluster.options.startDelayMs / 1_000);
    expect(await statusOf()).toMatchObject({ phase: 'Running', ready: true, endpointAddress: expect.any(String) });

    const ready = await internal.request(`/api/v1/internal/servers/${name}/ready`, { method: 'POST', headers: proxy });
    expect(ready.status).toBe(204);
    const join = await internal.request(`/api/v1/internal/servers/${name}/join-event`, jsonRequest('POST', { mc_uuid: player }, proxy));
    expect(join.status).toBe(204);
    deps.cluster.setPlayers(name, 1, 30);

    const menu = await internal.request(`/api/v1/internal/servers/${name}/menu?mc_uuid=${player}`, { headers: proxy });
    expect(menu.status).toBe(200);
    expect(await menu.json()).toEqual({ name, phase: 'Running', ready: true, playersOnline: 1, playersMax: 30, claimable: true });
  });

  it('answers a second wake inside the cooldown with 429 and Retry-After, and accepts it after 30 s', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const { name } = addServer(deps, { autostartPolicy: 'public' }).spec;
    const wake = () => internal.request(`/api/v1/internal/servers/${name}/wake`, jsonRequest('POST', { mc_uuid: randomMcUuid() }, bearer('proxy')));
    expect((await wake()).status).toBe(202);
    deps.clock.advance(10_000);
    const second = await wake();
    expect(second.status).toBe(429);
    expect((await errorOf(second)).code).toBe('cooldown');
    expect(second.headers.get('retry-after')).toBe('20');
    deps.clock.advance(20_000);
    expect((await wake()).status).toBe(202);
  });
});
