import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';
import { SimulatedCluster } from '../../adapters/cluster/simulated.js';
import { auditLog } from '../../db/schema/audit.js';
import { nodeTasks } from '../../db/schema/nodes.js';
import { webhookDeliveries, webhookEndpoints } from '../../db/schema/notifications.js';
import { eq } from 'drizzle-orm';
import { runNodeTask } from './runner.js';

const TASKS = '/api/v1/settings/node-control/tasks';
const ID = 'a'.repeat(32);

const request = (action: string, name: string, extra: Record<string, unknown> = {}) => ({ action, name, confirmMaintenance: true, ...extra });

describe('nodes and node control on the simulated cluster', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let apps: ReturnType<typeof createTestApps>;
  let cluster: SimulatedCluster;
  let owner: Record<string, string>;
  let ownerId: string;

  beforeEach(async () => {
    await database().db.delete(nodeTasks);
    const clock = createTestDeps(database()).clock;
    cluster = new SimulatedCluster({ clock, nodes: 3, pendingNodes: 1, startDelayMs: 1_000, stopDelayMs: 1_000 });
    deps = createTestDeps(database(), { overrides: { cluster, clock } });
    apps = createTestApps(deps);
    ownerId = (await createUser(deps, { role: 'owner', email: `o${Math.random()}@example.com`, emailVerified: true })).id;
    owner = (await signIn(deps, { userId: ownerId })).headers;
  });

  const get = (path: string, headers = owner) => apps.external.request(path, { headers });
  const post = (path: string, body?: unknown, headers = owner) =>
    apps.external.request(path, body === undefined ? { method: 'POST', headers } : jsonRequest('POST', body, headers));

  /** Moves the simulated cluster along until the task ends. */
  async function settle(id: string) {
    await vi.waitFor(
      async () => {
        deps.clock.advance(1_000);
        cluster.tick();
        const [row] = await deps.database.db.select().from(nodeTasks).where(eq(nodeTasks.id, id));
        expect(row?.state).not.toBe('running');
      },
      { timeout: 10_000, interval: 50 },
    );
    return (await (await get(`${TASKS}/${id}`)).json()) as { state: string; stage: string; error?: string; log?: string };
  }

  function running(name: string, node: string) {
    cluster.addServer({ name, subdomain: name, labels: {}, desiredState: 'Running', node });
    deps.clock.advance(1_000);
    cluster.tick();
  }

  it('GET /nodes: every node with its readiness, approval, cordon, quantities and the servers on it', async () => {
    running('alpha', 'sim-node-1');
    cluster.addServer({ name: 'beta', subdomain: 'beta', labels: {}, node: 'sim-node-1' });
    const res = await get('/api/v1/nodes');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sharedVolumes: boolean; nodes: Array<Record<string, unknown>> };
    expect(body.sharedVolumes).toBe(true);
    expect(body.nodes.map((n) => n.name)).toEqual(['sim-node-1', 'sim-node-2', 'sim-node-3', 'sim-node-4']);
    expect(body.nodes[0]).toMatchObject({
      ready: true,
      approved: true,
      cordoned: false,
      role: 'game',
      capacity: { cpu: '8', memory: '32Gi' },
      allocatable: { cpu: '7500m', memory: '30Gi' },
      servers: ['alpha', 'beta'],
      running: 1,
      cap: 20,
      maintenance: false,
    });
    expect(body.nodes[3]).toMatchObject({ approved: false, servers: [], running: 0 });
  });

  it('a first start binds the world to the emptiest game node, and later starts follow it', async () => {
    running('one', 'sim-node-1');
    cluster.addServer({ name: 'two', subdomain: 'two', labels: {}, desiredState: 'Running' });
    expect(cluster.server('two')?.spec.node).toBe('sim-node-2');
    expect(cluster.server('two')?.status.node).toBe('sim-node-2');
  });

  it('drain: cordons, stops the three servers on the node, releases their volumes; wakes are refused until the node returns', async () => {
    for (const name of ['s1', 's2', 's3']) running(name, 'sim-node-1');
    running('elsewhere', 'sim-node-2');
    const res = await post(TASKS, request('drain', 'sim-node-1'));
    expect(res.status).toBe(202);
    const task = (await res.json()) as { id: string; state: string; actor: string; request: unknown };
    expect(task).toMatchObject({ state: 'running', actor: ownerId, request: request('drain', 'sim-node-1') });

    // One at a time, on any replica.
    const busy = await post(TASKS, request('cordon', 'sim-node-2'));
    expect(busy.status).toBe(409);
    expect((await errorOf(busy)).code).toBe('node_operation_busy');

    const done = await settle(task.id);
    expect(done).toMatchObject({ state: 'succeeded', stage: 'done' });
    expect(done.log).toContain('[felis] releasing');
    expect(done.log).toContain('released 3 world volume(s)');
    for (const name of ['s1', 's2', 's3']) expect(cluster.server(name)?.status).toMatchObject({ phase: 'Stopped' });
    expect(cluster.server('s1')?.status.node).toBeUndefined();
    expect(cluster.server('elsewhere')?.status.phase).toBe('Running');
    expect(cluster.nodes.node('sim-node-1')?.unschedulable).toBe(true);

    const wake = await post('/api/v1/servers/s1/wake');
    expect(wake.status).toBe(409);
    expect((await errorOf(wake)).code).toBe('node_operation_busy');
    const nodes = (await (await get('/api/v1/nodes')).json()) as { nodes: Array<{ name: string; maintenance: boolean; cordoned: boolean }> };
    expect(nodes.nodes.find((n) => n.name === 'sim-node-1')).toMatchObject({ maintenance: true, cordoned: true });

    const back = (await (await post(TASKS, request('return', 'sim-node-1'))).json()) as { id: string };
    expect(await settle(back.id)).toMatchObject({ state: 'succeeded' });
    expect(cluster.nodes.node('sim-node-1')?.unschedulable).toBe(false);
    expect((await post('/api/v1/servers/s1/wake')).status).toBeLessThan(300);

    const audit = await deps.database.db.select().from(auditLog).where(eq(auditLog.target, task.id));
    expect(audit.map((a) => a.action)).toEqual(['platform.node.drain']);
  });

  it('raises node.maintenance_started when a node is taken out and node.maintenance_ended when it returns, once each', async () => {
    await deps.database.db.delete(webhookDeliveries);
    await deps.database.db.delete(webhookEndpoints);
    const now = deps.clock.now();
    await deps.database.db.insert(webhookEndpoints).values({
      name: 'ops',
      url: 'https://hooks.example.com/x',
      secret: 'whsec_test',
      format: 'json',
      events: ['node.maintenance_started', 'node.maintenance_ended'],
      enabled: true,
      createdBy: 'test',
      createdAt: now,
      updatedAt: now,
    });
    const drain = (await (await post(TASKS, request('drain', 'sim-node-2'))).json()) as { id: string };
    await settle(drain.id);
    // A second replica resuming the same task raises nothing new.
    await runNodeTask({ ...deps, replica: 'felis-other' }, drain.id);
    const back = (await (await post(TASKS, request('return', 'sim-node-2'))).json()) as { id: string };
    await settle(back.id);
    const queued = await deps.database.db.select().from(webhookDeliveries);
    expect(queued.map((d) => [d.eventType, (d.payload as { subject: { id: string } }).subject.id]).sort()).toEqual([
      ['node.maintenance_ended', 'sim-node-2'],
      ['node.maintenance_started', 'sim-node-2'],
    ]);
  });

  it('approve labels a pending node as a game node; remove takes it away once no world is on it', async () => {
    const approve = (await (await post(TASKS, request('approve', 'sim-node-4', { sshTarget: 'sim-node-4' }))).json()) as { id: string };
    expect(await settle(approve.id)).toMatchObject({ state: 'succeeded' });
    expect(cluster.nodes.node('sim-node-4')?.approved).toBe(true);

    running('pinned', 'sim-node-3');
    const refused = await post(TASKS, request('remove', 'sim-node-3'));
    expect(refused.status).toBe(409);
    expect((await errorOf(refused)).code).toBe('conflict');

    const remove = (await (await post(TASKS, request('remove', 'sim-node-4'))).json()) as { id: string };
    expect(await settle(remove.id)).toMatchObject({ state: 'succeeded' });
    expect(cluster.nodes.node('sim-node-4')).toMatchObject({ approved: false, unschedulable: true });
  });

  it('a task whose replica died is finished by another replica, and only a failed task is retried', async () => {
    const now = deps.clock.now();
    await deps.database.db.insert(nodeTasks).values({ id: ID, action: 'cordon', node: 'sim-node-2', request: request('cordon', 'sim-node-2'), actor: ownerId, state: 'running', stage: 'preflight', startedAt: now });
    await runNodeTask({ ...deps, replica: 'another-replica' }, ID);
    expect((await (await get(`${TASKS}/${ID}`)).json()) as object).toMatchObject({ state: 'succeeded' });
    expect(cluster.nodes.node('sim-node-2')?.unschedulable).toBe(true);

    const notFailed = await post(`${TASKS}/${ID}/retry`);
    expect(notFailed.status).toBe(409);
    expect((await errorOf(notFailed)).code).toBe('conflict');

    await deps.database.db.update(nodeTasks).set({ state: 'failed', error: 'interrupted' }).where(eq(nodeTasks.id, ID));
    const retried = await post(`${TASKS}/${ID}/retry`);
    expect(retried.status).toBe(202);
    const again = (await retried.json()) as { id: string; request: unknown };
    expect(again.id).not.toBe(ID);
    expect(again.request).toEqual(request('cordon', 'sim-node-2'));
    expect(await settle(again.id)).toMatchObject({ state: 'succeeded' });
  });

  it('without node writes (RBAC), available is false and a task answers 503 node_control_unavailable, never a 500', async () => {
    cluster.nodes.setWritable(false);
    expect(await (await get('/api/v1/settings/node-control')).json()).toEqual({ available: false, tasks: [] });
    const res = await post(TASKS, request('cordon', 'sim-node-1'));
    expect(res.status).toBe(503);
    expect((await errorOf(res)).code).toBe('node_control_unavailable');
    expect(res.headers.get('Retry-After')).toBe('5');
    cluster.nodes.setWritable(true);
    expect(((await (await get('/api/v1/settings/node-control')).json()) as { available: boolean }).available).toBe(true);
  });

  it('a node task while the cluster does not answer is an outage (503 unavailable with Retry-After), not a refusal', async () => {
    cluster.setReachable(false);
    const res = await post(TASKS, request('cordon', 'sim-node-1'));
    expect(res.status).toBe(503);
    expect((await errorOf(res)).code).toBe('unavailable');
    expect(res.headers.get('Retry-After')).toBe('5');
    cluster.setReachable(true);
  });

  it('an unreachable cluster answers 503 unavailable on GET /nodes', async () => {
    cluster.setReachable(false);
    const res = await get('/api/v1/nodes');
    expect(res.status).toBe(503);
  });

  it('node control is the owner\'s: an admin gets 403 on every route', async () => {
    const admin = (await signIn(deps, { userId: (await createUser(deps, { role: 'admin' })).id })).headers;
    expect((await get('/api/v1/settings/node-control', admin)).status).toBe(403);
    expect((await post(TASKS, request('cordon', 'sim-node-1'), admin)).status).toBe(403);
    expect((await get(`${TASKS}/${ID}`, admin)).status).toBe(403);
    expect((await post(`${TASKS}/${ID}/retry`, undefined, admin)).status).toBe(403);
    expect((await get('/api/v1/nodes', admin)).status).toBe(200);
  });

  it('starting or retrying a task needs a proof of the last five minutes', async () => {
    deps.clock.advance(6 * 60_000);
    const fresh = (await signIn(deps, { userId: ownerId, method: 'password' })).headers;
    const res = await post(TASKS, request('cordon', 'sim-node-1'), fresh);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('reauth_required');
    expect((await post(`${TASKS}/${ID}/retry`, undefined, fresh)).status).toBe(403);
  });

  it('refuses bad requests with 400 and unknown tasks with 404', async () => {
    const cases: Array<[unknown, string]> = [
      [{ action: 'cordon', name: 'sim-node-1', confirmMaintenance: false }, 'bad_request'],
      [{ action: 'cordon', name: 'sim-node-1' }, 'bad_request'],
      [{ action: 'reboot', name: 'sim-node-1', confirmMaintenance: true }, 'bad_request'],
      [{ action: 'cordon', name: 'Bad_Node', confirmMaintenance: true }, 'bad_request'],
      [{ action: 'cordon', name: 'sim-node-1', confirmMaintenance: true, extra: 1 }, 'bad_request'],
      [{ action: 'approve', name: 'x', sshTarget: '-exec', confirmMaintenance: true }, 'bad_request'],
      [{ action: 'cordon', name: 'no-such-node', confirmMaintenance: true }, 'bad_node'],
      [{ action: 'cordon', name: 'sim-node-4', confirmMaintenance: true }, 'bad_node'],
    ];
    for (const [body, code] of cases) {
      const res = await post(TASKS, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code, JSON.stringify(body)).toBe(code);
    }
    expect((await get(`${TASKS}/not-an-id`)).status).toBe(400);
    expect((await get(`${TASKS}/${ID}`)).status).toBe(404);
    expect((await post(`${TASKS}/${ID}/retry`)).status).toBe(404);
  });

  describe('moving a server to another node', () => {
    const MOVES = (name: string) => `/api/v1/servers/${name}/migrations`;

    async function stoppedOn(name: string, node: string) {
      running(name, node);
      await deps.cluster.setDesiredState(name, 'Stopped');
      deps.clock.advance(1_000);
      cluster.tick();
    }

    it('moves the placement of a stopped server under its world lock, step by step', async () => {
      await stoppedOn('mover', 'sim-node-1');
      const res = await post(MOVES('mover'), { targetNode: 'sim-node-2' });
      expect(res.status).toBe(202);
      const move = (await res.json()) as Record<string, unknown>;
      expect(move).toMatchObject({ server: 'mover', state: 'succeeded', stage: 'succeeded', sourceNode: 'sim-node-1', targetNode: 'sim-node-2', switched: true, attempt: 0 });
      expect(cluster.server('mover')?.spec.node).toBe('sim-node-2');
      expect(await (await get(MOVES('mover'))).json()).toEqual(move);
      expect(await deps.database.db.select().from(auditLog).where(eq(auditLog.action, 'server.migrate'))).toHaveLength(1);
      // The next start runs on the target.
      await deps.cluster.setDesiredState('mover', 'Running');
      expect(cluster.server('mover')?.status.node).toBe('sim-node-2');
    });

    it('a move that fails at its switch leaves the server whole on its source, and a retry finishes it', async () => {
      await stoppedOn('flaky', 'sim-node-1');
      cluster.nodes.placeServer = async () => {
        throw new Error('the cluster refused the write');
      };
      const failed = (await (await post(MOVES('flaky'), { targetNode: 'sim-node-3' })).json()) as { id: string };
      expect(failed).toMatchObject({ state: 'failed', stage: 'switching', switched: false, attempt: 0 });
      expect(cluster.server('flaky')?.spec.node).toBe('sim-node-1');
      // An unfinished move holds the server's moves: another target waits until this one is retried.
      const other = await post(MOVES('flaky'), { targetNode: 'sim-node-2' });
      expect(other.status).toBe(409);
      expect((await errorOf(other)).code).toBe('migration_busy');

      delete (cluster.nodes as { placeServer?: unknown }).placeServer;
      const retried = await post(`${MOVES('flaky')}/${failed.id}/retry`);
      expect(retried.status).toBe(202);
      expect(await retried.json()).toMatchObject({ id: failed.id, state: 'succeeded', switched: true, attempt: 1 });
      expect(cluster.server('flaky')?.spec.node).toBe('sim-node-3');
      const again = await post(`${MOVES('flaky')}/${failed.id}/retry`);
      expect(again.status).toBe(409);
      expect((await errorOf(again)).code).toBe('migration_busy');
    });

    it('refuses a running server, a busy world, a bad target and a node task in progress', async () => {
      running('busy', 'sim-node-1');
      const notStopped = await post(MOVES('busy'), { targetNode: 'sim-node-2' });
      expect(notStopped.status).toBe(409);
      expect((await errorOf(notStopped)).code).toBe('migration_busy');

      await stoppedOn('target', 'sim-node-1');
      for (const targetNode of ['sim-node-1', 'sim-node-4', 'no-such-node']) {
        const res = await post(MOVES('target'), { targetNode });
        expect(res.status, targetNode).toBe(400);
        expect((await errorOf(res)).code, targetNode).toBe('bad_node');
      }
      expect((await post(MOVES('target'), { targetNode: 'Bad_Name' })).status).toBe(400);
      expect((await post(MOVES('target'), { targetNode: 'sim-node-2', extra: 1 })).status).toBe(400);
      expect((await post(MOVES('nobody'), { targetNode: 'sim-node-2' })).status).toBe(404);
      expect((await get(MOVES('target'))).status).toBe(404);

      const { holdWorld } = await import('../worlds/index.js');
      const lock = await holdWorld(deps, 'target', 'a-backup', 'backup');
      const held = (await (await post(MOVES('target'), { targetNode: 'sim-node-2' })).json()) as { id: string; state: string; error?: string };
      expect(held.state).toBe('failed');
      expect(cluster.server('target')?.spec.node).toBe('sim-node-1');
      await lock.release();
      expect(await (await post(`${MOVES('target')}/${held.id}/retry`)).json()).toMatchObject({ state: 'succeeded', attempt: 1 });

      await deps.database.db.insert(nodeTasks).values({ id: ID, action: 'cordon', node: 'sim-node-3', request: request('cordon', 'sim-node-3'), actor: ownerId, state: 'running', stage: 'preflight', startedAt: deps.clock.now() });
      await stoppedOn('later', 'sim-node-1');
      const guarded = await post(MOVES('later'), { targetNode: 'sim-node-2' });
      expect(guarded.status).toBe(409);
      expect((await errorOf(guarded)).code).toBe('node_operation_busy');
    });

    it('answers 503 distributed_unavailable where the worlds are node-local volumes the cluster cannot make on another node', async () => {
      await stoppedOn('local', 'sim-node-1');
      Object.defineProperty(cluster.nodes, 'sharedVolumes', { value: false });
      const res = await post(MOVES('local'), { targetNode: 'sim-node-2' });
      expect(res.status).toBe(503);
      expect((await errorOf(res)).code).toBe('distributed_unavailable');
      expect(cluster.server('local')?.spec.node).toBe('sim-node-1');
    });

    it('is staff only', async () => {
      await stoppedOn('mine', 'sim-node-1');
      const player = (await signIn(deps, { userId: (await createUser(deps)).id })).headers;
      expect((await post(MOVES('mine'), { targetNode: 'sim-node-2' }, player)).status).toBe(403);
      expect((await get(MOVES('mine'), player)).status).toBe(403);
    });
  });

  describeTierMatrix(database, 'admin', [
    { method: 'get', path: '/api/v1/nodes' },
    { method: 'get', path: '/api/v1/settings/node-control' },
    { method: 'post', path: TASKS, body: request('cordon', 'sim-node-1') },
    { method: 'get', path: `${TASKS}/${ID}` },
    { method: 'post', path: `${TASKS}/${ID}/retry` },
    { method: 'get', path: '/api/v1/servers/alpha/migrations' },
    { method: 'post', path: '/api/v1/servers/alpha/migrations', body: { targetNode: 'sim-node-2' } },
    { method: 'post', path: `/api/v1/servers/alpha/migrations/${ID}/retry` },
  ]);
  describeBadBodies(database, [
    { method: 'POST', path: '/api/v1/servers/alpha/migrations', headers: async (d) => (await signIn(d, { userId: (await createUser(d, { role: 'owner' })).id })).headers },
    { method: 'POST', path: TASKS, headers: async (d) => (await signIn(d, { userId: (await createUser(d, { role: 'owner' })).id })).headers },
  ]);
});
