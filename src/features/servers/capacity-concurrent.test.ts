import { describe, expect, it } from 'vitest';
import { SimulatedCluster } from '../../adapters/cluster/simulated.js';
import { ManualClock } from '../../lib/clock.js';
import { bearer, createTestApps, createTestDeps, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { claimFor } from '../../../test/helpers/worlds.js';
import { syncedCache } from './core/lookup.js';
import { writeSetting } from './wakes/settings.js';

/**
 * Issue 43, item 4: the running cap under concurrent wakes. A cap of 1 a node on 4 nodes; 11 wakes
 * at once by staff, owners and guests. Every 202 must stay a running server (none bumped by a later
 * wake), no node may run more than its cap, and GET /nodes shows the cap in force (the saved wake
 * policy), not the `node_server_cap` default.
 */

const database = useTestDatabase();

async function setUp() {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z');
  const cluster = new SimulatedCluster({ clock, nodes: 4 });
  const deps = createTestDeps(database(), { overrides: { clock, cluster } }) as TestDeps;
  // The wake policy staff saved: a cap of 1 a node, no cooldown. node_server_cap keeps its default (20).
  await writeSetting(deps.database.db, 'wake_policy', { maxRunningServers: 1, wakeCooldownSeconds: 0 }, clock.now());
  await writeSetting(deps.database.db, 'running_share_percent', 100, clock.now());
  const { external, internal } = createTestApps(deps);
  const staff = await signIn(deps, { userId: (await createUser(deps, { role: 'admin' })).id });
  return { deps, external, internal, staff };
}

/** Lets the simulated cluster run every start and stop it was asked for. */
function settle(deps: TestDeps) {
  for (let i = 0; i < 3; i++) {
    deps.clock.advance(Math.max(deps.cluster.options.startDelayMs, deps.cluster.options.stopDelayMs) + 1);
    deps.cluster.tick();
  }
}

const all = (deps: TestDeps) => [...deps.serverCache.all()].map((c) => deps.cluster.server(c.resource.spec.name)!);

function perNode(deps: TestDeps): Map<string, string[]> {
  const on = new Map<string, string[]>();
  for (const s of all(deps)) {
    if (s.status.phase !== 'Running') continue;
    const node = s.status.node ?? '?';
    on.set(node, [...(on.get(node) ?? []), s.spec.name]);
  }
  return on;
}

describe('the running cap under concurrent wakes', () => {
  it('starts at most the cap on each node of 11 concurrent wakes, and never takes back a 202', async () => {
    const { deps, external, internal, staff } = await setUp();
    const owners = await Promise.all(Array.from({ length: 4 }, async () => {
      const user = await createUser(deps, { role: 'user' });
      return { user, session: await signIn(deps, { userId: user.id }) };
    }));
    const names = Array.from({ length: 11 }, () => addServer(deps, { autostartPolicy: 'public' }).spec.name);
    // Four are claimed (their owners wake them), four are woken by staff, three by guests through the proxy.
    for (let i = 0; i < 4; i++) await claimFor(deps, names[i]!, owners[i]!.user.id);
    await syncedCache(deps);
    const answers = await Promise.all(
      names.map((name, i) => {
        if (i < 4) return external.request(`/api/v1/servers/${name}/wake`, { method: 'POST', headers: owners[i]!.session.headers });
        if (i < 8) return external.request(`/api/v1/servers/${name}/wake`, { method: 'POST', headers: staff.headers });
        return internal.request(`/api/v1/internal/servers/${name}/wake`, jsonRequest('POST', { mc_uuid: randomMcUuid() }, bearer('proxy')));
      }),
    );
    const accepted = names.filter((_, i) => answers[i]!.status === 202);
    for (const [i, a] of answers.entries()) expect([202, 503], `${names[i]}: ${a.status}`).toContain(a.status);
    settle(deps);
    const running = all(deps).filter((s) => s.status.phase === 'Running').map((s) => s.spec.name);
    // Every 202 is a server that runs: none was taken back by a later wake.
    expect(running.sort()).toEqual([...accepted].sort());
    expect(running.length).toBeLessThanOrEqual(4);
    for (const [node, on] of perNode(deps)) expect(on, node).toHaveLength(1);

    // A second wave once they run: nothing more starts (each node is at its cap).
    const more = await Promise.all(names.filter((n) => !accepted.includes(n)).map((name) => external.request(`/api/v1/servers/${name}/wake`, { method: 'POST', headers: staff.headers })));
    settle(deps);
    const after = all(deps).filter((s) => s.status.phase === 'Running').map((s) => s.spec.name);
    expect(after.length).toBeLessThanOrEqual(4);
    for (const [node, on] of perNode(deps)) expect(on, node).toHaveLength(1);
    expect(more.filter((m) => m.status === 202).length).toBe(after.filter((n) => !accepted.includes(n)).length);
  });

  it('GET /nodes shows the cap in force', async () => {
    const { external, staff } = await setUp();
    const res = await external.request('/api/v1/nodes', { headers: staff.headers });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { nodes: { cap: number }[] };
    expect(body.nodes).toHaveLength(4);
    for (const node of body.nodes) expect(node.cap).toBe(1);
  });
});
