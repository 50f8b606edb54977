import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApps, createTestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { KubeStandIn } from '../../../../test/helpers/kube-stand-in.js';
import { startRconPeer, type RconPeer } from '../../../../test/helpers/rcon-peer.js';
import { uniqueServerName } from '../../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../../test/helpers/sessions.js';
import { Leadership } from '../../../coordination/index.js';
import { ManualClock } from '../../../lib/clock.js';
import { createLogger } from '../../../lib/logger.js';
import { RconConnection } from '../../rcon/client.js';
import { PaperGame } from '../simulated-paper.js';
import { KubernetesCluster } from './adapter.js';
import { LifecycleController, type RconOpener } from './controller.js';
import { kubeConfigFor } from './kubeconfig.js';
import { DEFAULT_CRD, type MinecraftServer } from './resource.js';

const NS = 'felis';
const FIXED_BYTE = 7;
/** The password the adapter writes into a new server's Secret with the fixed random source. */
const PASSWORD = Buffer.from(new Uint8Array(24).fill(FIXED_BYTE)).toString('base64url');
const rcon: RconOpener = (endpoint, timeoutMs) => RconConnection.open(endpoint, { connectTimeoutMs: timeoutMs, commandTimeoutMs: timeoutMs });
const silentLog = createLogger('silent');

let standIn: KubeStandIn;
let peer: RconPeer;
let game: PaperGame;

beforeAll(async () => {
  standIn = await KubeStandIn.start();
  standIn.defineCustomResource(DEFAULT_CRD.group, DEFAULT_CRD.version, DEFAULT_CRD.plural, 'MinecraftServer');
  standIn.put('nodes', { metadata: { name: 'node-1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
});
afterAll(() => standIn.close());
const database = useTestDatabase();
/** A replica's leadership of its own name, so each controller of a test leads alone or races only its twin. */
const leadership = (identity: string, clock: ManualClock, name = uniqueServerName('l')) =>
  new Leadership({ db: database().db, clock, replica: identity }, { name });
afterEach(() => peer?.close());

async function setUp(options: { game?: PaperGame } = {}) {
  game = options.game ?? new PaperGame();
  peer = await startRconPeer({ password: PASSWORD, game });
  const clock = new ManualClock('2026-06-01T12:00:00.000Z');
  const cluster = new KubernetesCluster({
    kubeConfig: kubeConfigFor(standIn.url),
    namespace: NS,
    clock,
    random: { bytes: (n) => new Uint8Array(n).fill(FIXED_BYTE) },
    rconAddress: () => ({ host: '127.0.0.1', port: peer.endpoint.port }),
    watchBackoffMs: { initial: 20, max: 200 },
  });
  const controller = (identity: string) =>
    new LifecycleController({
      cluster,
      lock: leadership(identity, clock),
      rcon,
      clock,
      log: silentLog,
    });
  return { clock, cluster, controller };
}

/** A server created straight in the cluster with desiredState Running, brought up to Running. */
async function runningServer(cluster: KubernetesCluster, c: LifecycleController, prefix: string): Promise<string> {
  const name = uniqueServerName(prefix);
  await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
  await c.tick();
  standIn.setPodReady(NS, `${name}-0`, true);
  await c.tick();
  return name;
}

const server = (name: string) => standIn.get('minecraftservers', NS, name) as unknown as MinecraftServer;
const statefulSet = (name: string) => standIn.get('statefulsets', NS, name);
const pod = (name: string) => standIn.get('pods', NS, `${name}-0`);

describe('lifecycle controller against the API stand-in and a TCP RCON peer', () => {

  it('turns a server created over the API into a StatefulSet that wakes, reports players, idles out and stops cleanly', async () => {
    const { clock, cluster, controller } = await setUp();
    const deps = createTestDeps(database(), { overrides: { cluster: cluster as never, clock } });
    const admin = await createUser(deps, { role: 'admin' });
    const { headers } = await signIn(deps, { userId: admin.id });
    const { external } = createTestApps(deps);
    const name = uniqueServerName('life');
    const created = await external.request('/api/v1/servers', {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, subdomain: name }),
    });
    expect(created.status).toBe(201);
    const c = controller('a');

    await c.tick();
    expect(statefulSet(name)).toMatchObject({ spec: { replicas: 0, serviceName: name, volumeClaimTemplates: [{ metadata: { name: 'world' } }] } });
    expect(standIn.get('services', NS, name)).toMatchObject({ spec: { ports: [{ port: 25565 }, { port: 25575 }] } });
    expect(pod(name)).toBeUndefined();

    // A short idle period, to show the three-minute grace after first ready still holds.
    await cluster.patchServerSpec(name, { idle: { stopSeconds: 60 } });
    const woken = await external.request(`/api/v1/servers/${name}/wake`, { method: 'POST', headers });
    expect(woken.status).toBe(202);
    await c.tick();
    expect(statefulSet(name)!.spec!.replicas).toBe(1);
    expect(server(name).status).toMatchObject({ phase: 'Starting', ready: false });
    expect(pod(name)).toBeDefined();

    await c.tick(); // the pod is not running yet: still starting
    expect(server(name).status?.phase).toBe('Starting');
    standIn.setPodReady(NS, `${name}-0`, true);
    await c.tick();
    expect(server(name).status).toMatchObject({ phase: 'Running', ready: true, players: { online: 0, max: 20, unknown: false } });
    expect(peer.accepted).toBeGreaterThan(0);

    game.join('Alice');
    game.join('Bob');
    clock.advance(30_000);
    await c.tick();
    expect(server(name).status).toMatchObject({ players: { online: 2 } });
    expect(server(name).status?.emptySince).toBeUndefined();
    await vi.waitFor(async () => {
      const res = await external.request(`/api/v1/servers/${name}/status`, { headers });
      expect(await res.json()).toMatchObject({ phase: 'Running', ready: true, playersOnline: 2 });
    });

    game.online.splice(0);
    await c.tick();
    expect(server(name).status?.emptySince).toBe(clock.now().toISOString());
    clock.advance(61_000); // empty past its idle period, but within 3 minutes of first ready
    await c.tick();
    expect(server(name).status?.phase).toBe('Running');
    expect(game.received).not.toContain('save-all flush');

    clock.advance(120_000);
    await c.tick();
    expect(game.received.slice(-2)).toEqual(['say This server is stopping now. The world is being saved.', 'save-all flush']);
    expect(server(name).spec.desiredState).toBe('Stopped');
    expect(server(name).status?.phase).toBe('Stopping');
    expect(statefulSet(name)!.spec!.replicas).toBe(0);
    expect(pod(name)).toBeUndefined();
    await c.tick();
    expect(server(name).status).toMatchObject({ phase: 'Stopped', ready: false, players: { online: 0 } });
    await c.stop();
  });

  it('pauses idle stop while the player count cannot be read', async () => {
    class Unreadable extends PaperGame {
      override execute(command: string): string {
        return command === 'list' ? 'An internal error occurred while attempting to perform this command' : super.execute(command);
      }
    }
    const { clock, cluster, controller } = await setUp({ game: new Unreadable() });
    const name = uniqueServerName('unread');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', idleStopSeconds: 60, labels: {} });
    const c = controller('a');
    await c.tick();
    standIn.setPodReady(NS, `${name}-0`, true);
    await c.tick();
    expect(server(name).status).toMatchObject({ phase: 'Running', players: { unknown: true } });
    clock.advance(3_600_000);
    await c.tick();
    expect(server(name).status).toMatchObject({ phase: 'Running', players: { unknown: true } });
    expect(game.received).not.toContain('save-all flush');
    expect((await cluster.getServerObject(name)).spec.desiredState).toBe('Running');
    await c.stop();
  });

  it('counts a pod ready only when RCON accepts the password, not on TCP accept alone', async () => {
    const { cluster, controller } = await setUp();
    const name = uniqueServerName('auth');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
    const secret = standIn.get('secrets', NS, `${name}-rcon`)!;
    standIn.put('secrets', { ...secret, data: { password: Buffer.from('not-the-password').toString('base64') } });
    const c = controller('a');
    await c.tick();
    standIn.setPodReady(NS, `${name}-0`, true);
    await c.tick();
    expect(peer.refusedLogins).toBe(1);
    expect(server(name).status).toMatchObject({ phase: 'Starting', ready: false });
    standIn.put('secrets', { ...secret, data: { password: Buffer.from(PASSWORD).toString('base64') } });
    await c.tick();
    expect(server(name).status).toMatchObject({ phase: 'Running', ready: true });
    await c.stop();
  });

  it('passes at once when kicked (a wake), not only at its interval', async () => {
    const { cluster } = await setUp();
    const kickClock = new ManualClock('2026-06-01T12:00:00.000Z');
    const c = new LifecycleController({
      cluster,
      lock: leadership('a', kickClock),
      rcon,
      clock: kickClock,
      log: silentLog,
      intervalMs: 3_600_000,
    });
    const name = uniqueServerName('kick');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Stopped', labels: {} });
    c.kick(); // not started: nothing happens
    expect(c.passesActed).toBe(0);
    c.start();
    await vi.waitFor(() => expect(statefulSet(name)?.spec?.replicas).toBe(0));
    await cluster.setDesiredState(name, 'Running');
    c.kick();
    c.kick();
    await vi.waitFor(() => expect(statefulSet(name)?.spec?.replicas).toBe(1));
    expect(c.passesActed).toBe(2);
    await c.stop();
  });

  it('runs as the cluster task: leads, acts and listens for desired-state changes while started, and lets go when stopped', async () => {
    const { clock, cluster } = await setUp();
    const registry = new Registry();
    const listeners = new Set<(name: string) => void>();
    const lock = leadership('a', clock);
    const [task, ...others] = cluster.tasks({
      leadership: lock,
      registry,
      log: silentLog,
      onDesiredStateChange: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    });
    expect(others).toEqual([]);
    expect(task!.name).toBe('lifecycle');
    const name = uniqueServerName('task');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Stopped', labels: {} });
    task!.start();
    expect(listeners.size).toBe(1);
    await vi.waitFor(() => expect(statefulSet(name)?.spec?.replicas).toBe(0));
    expect(await registry.metrics()).toContain('felis_lifecycle_leader 1');
    await task!.stop();
    expect(listeners.size).toBe(0);
    expect(lock.holds()).toBe(false);
  });

  it('stops a running server cleanly when asked (warning, save-all flush, then scale to zero)', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = await runningServer(cluster, c, 'stop');
    await cluster.setDesiredState(name, 'Stopped');
    await c.tick();
    expect(game.received.slice(-2)).toEqual(['say This server is stopping now. The world is being saved.', 'save-all flush']);
    expect(statefulSet(name)!.spec!.replicas).toBe(0);
    await c.tick();
    expect(server(name).status?.phase).toBe('Stopped');
    await c.stop();
  });

  it('stops a server in an emergency without the clean save: no warning, no save-all, the pod gone, then Stopped', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = await runningServer(cluster, c, 'estop');
    const before = game.received.length;
    await cluster.emergencyStop(name);
    expect(pod(name)).toBeUndefined();
    expect(statefulSet(name)!.spec!.replicas).toBe(0);
    await c.tick();
    expect(server(name).status?.phase).toBe('Stopped');
    expect(game.received.slice(before).filter((c) => c.startsWith('say') || c.startsWith('save-all'))).toEqual([]);
    await c.stop();
  });

  it('rolls a spec change into the StatefulSet at the next start, never under a running server', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = await runningServer(cluster, c, 'roll');
    const container = () => (statefulSet(name)!.spec as { template: { spec: { containers: Array<{ image: string; resources: { limits: Record<string, string> } }> } } }).template.spec.containers[0]!;
    await cluster.patchServerSpec(name, { image: 'itzg/minecraft-server:java21-graalvm', memory: '6Gi', resources: { cpu: '2' } });
    await c.tick();
    expect(container().image).toBe('itzg/minecraft-server:java21');

    await cluster.setDesiredState(name, 'Stopped');
    await c.tick();
    await c.tick();
    expect(server(name).status?.phase).toBe('Stopped');
    expect(container().image).toBe('itzg/minecraft-server:java21');
    await cluster.setDesiredState(name, 'Running');
    await c.tick();
    expect(container()).toMatchObject({ image: 'itzg/minecraft-server:java21-graalvm', resources: { limits: { memory: '6Gi', cpu: '2' } } });
    expect(statefulSet(name)!.spec!.replicas).toBe(1);

    // A limit the spec no longer names is gone from the template, not merged over.
    await cluster.setDesiredState(name, 'Stopped');
    await c.tick();
    await c.tick();
    await cluster.patchServerSpec(name, { resources: { cpu: null } } as never);
    await cluster.setDesiredState(name, 'Running');
    await c.tick();
    expect(container().resources.limits).toEqual({ memory: '6Gi' });
    await c.stop();
  });

  it('recreates a start that times out three times with doubling back-off, then gives up; a wake retries with a fresh budget', async () => {
    const { clock, cluster, controller } = await setUp();
    const name = uniqueServerName('hang');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
    await cluster.patchServerSpec(name, { startTimeoutSeconds: 60 });
    const c = controller('a');
    await c.tick();
    expect(server(name).status?.phase).toBe('Starting');
    const uids = [pod(name)!.metadata.uid];
    for (const backoffSeconds of [10, 20, 40]) {
      clock.advance(60_000);
      await c.tick();
      const { status } = server(name);
      expect(Date.parse(status!.retryAt!) - clock.now().getTime()).toBe(backoffSeconds * 1000);
      clock.advance(backoffSeconds * 1000 - 1);
      await c.tick();
      expect(pod(name)!.metadata.uid).toBe(uids.at(-1)); // still backing off
      clock.advance(1);
      await c.tick();
      uids.push(pod(name)!.metadata.uid);
      expect(new Set(uids).size).toBe(uids.length); // a new pod
    }
    expect(server(name).status).toMatchObject({ phase: 'Starting', autoRestarts: 3 });
    clock.advance(60_000);
    await c.tick();
    expect(server(name).status).toMatchObject({ phase: 'Failed', startGaveUp: true, autoRestarts: 3 });
    expect(statefulSet(name)!.spec!.replicas).toBe(0);
    await c.tick(); // a given-up start stays down
    expect(server(name).status?.phase).toBe('Failed');

    // The owner's wake from the panel: the pod comes back with a fresh budget, and this time it comes up.
    await cluster.recreatePod(name);
    expect(server(name).status).toMatchObject({ phase: 'Starting', autoRestarts: 0, startGaveUp: false });
    await c.tick();
    standIn.setPodReady(NS, `${name}-0`, true);
    await c.tick();
    expect(server(name).status).toMatchObject({ phase: 'Running', ready: true });
    await c.stop();
  });

  it('gives up at once on a spec that can never start', async () => {
    const { cluster, controller } = await setUp();
    const name = uniqueServerName('bad');
    await cluster.createServer({ name, subdomain: name, image: 'Not An Image!', desiredState: 'Running', labels: {} });
    const c = controller('a');
    await c.tick();
    expect(server(name).status).toMatchObject({ phase: 'Failed', startGaveUp: true, autoRestarts: 0 });
    expect(server(name).status?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False', reason: 'InvalidSpec' }));
    expect(statefulSet(name)).toBeUndefined();
    await c.stop();
  });

  it('retires a server: stops it cleanly and removes its StatefulSet and Service', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = await runningServer(cluster, c, 'old');
    await cluster.patchServerSpec(name, { retired: true });
    await c.tick();
    expect(game.received).toContain('save-all flush');
    expect(statefulSet(name)).toBeUndefined();
    expect(standIn.get('services', NS, name)).toBeUndefined();
    expect(server(name).status).toMatchObject({ phase: 'Stopped', ready: false });
    expect(server(name).status?.conditions).toContainEqual(expect.objectContaining({ type: 'Retired', status: 'True' }));
    await c.stop();
  });
});
