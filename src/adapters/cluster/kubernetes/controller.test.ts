import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApps, createTestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { applyManifest, applyServiceRbac, PlayedCluster, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../../../../test/helpers/kube-api.js';
import { startRconPeer, type RconPeer } from '../../../../test/helpers/rcon-peer.js';
import { uniqueServerName } from '../../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../../test/helpers/sessions.js';
import { Leadership } from '../../../coordination/index.js';
import { ManualClock } from '../../../lib/clock.js';
import { createLogger } from '../../../lib/logger.js';
import { RconConnection } from '../../rcon/client.js';
import { PaperGame } from '../simulated-paper.js';
import { FIELD_MANAGER, KubernetesCluster } from './adapter.js';
import { CONTROLLER_LEASE, LifecycleController, type RconOpener } from './controller.js';
import { DEFAULT_CRD, type MinecraftServer } from './resource.js';

const FIXED_BYTE = 7;
/** The password the adapter writes into a new server's Secret with the fixed random source. */
const PASSWORD = Buffer.from(new Uint8Array(24).fill(FIXED_BYTE)).toString('base64url');
const rcon: RconOpener = (endpoint, timeoutMs) => RconConnection.open(endpoint, { connectTimeoutMs: timeoutMs, commandTimeoutMs: timeoutMs });
const silentLog = createLogger('silent');

let peer: RconPeer;
let game: PaperGame;
const database = useTestDatabase();
/** A replica's leadership of its own name, so each controller of a test leads alone or races only its twin. */
const leadership = (identity: string, clock: ManualClock, name = uniqueServerName('l')) =>
  new Leadership({ db: database().db, clock, replica: identity }, { name });
/** Each test's cluster adapter, closed after it (its caches' watches end). */
const clusters: KubernetesCluster[] = [];
afterEach(async () => {
  peer?.close();
  await Promise.all(clusters.splice(0).map((c) => c.close()));
});

/**
 * The lifecycle controller on the run's real kube-apiserver, signed in as the service's own
 * ServiceAccount with deploy/rbac.yaml's Role (a verb it needs and lacks fails here), in a namespace
 * of this file's own. There is no controller-manager and no kubelet: the test plays the
 * StatefulSet controller after each pass (PlayedCluster) and the kubelet when a pod is to run.
 */
describe.skipIf(!realApiServer())('lifecycle controller on a real API server and a TCP RCON peer', () => {
  const api = useApiNamespace('felis-lc');
  let admin: KubeConfig;
  let NS: string;
  let serviceAccount: KubeConfig;
  let played: PlayedCluster;

  beforeAll(async () => {
    ({ kubeConfig: admin, namespace: NS } = api());
    await applyManifest(admin, 'crd.yaml');
    await applyServiceRbac(admin, NS);
    played = new PlayedCluster(admin, NS);
    await played.prepareNamespace();
    // A Ready node, so a wake finds room (capacity counts Ready, schedulable nodes).
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNode({ body: { metadata: { name: `${NS}-node` } } });
    const node = await core.readNode({ name: `${NS}-node` });
    await core.replaceNodeStatus({ name: `${NS}-node`, body: { ...node, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
    serviceAccount = await vi.waitFor(() => serviceAccountKubeConfig(admin, NS), { timeout: 20_000, interval: 100 });
    // The new CRD is served, and the new binding applies, a moment later.
    const probe = new KubernetesCluster({ kubeConfig: serviceAccount, namespace: NS });
    await vi.waitFor(() => probe.listServers(), { timeout: 20_000, interval: 100 });
    return () => core.deleteNode({ name: `${NS}-node` }).then(() => undefined, () => undefined);
  });

  async function setUp(options: { game?: PaperGame } = {}) {
    game = options.game ?? new PaperGame();
    peer = await startRconPeer({ password: PASSWORD, game });
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const cluster = new KubernetesCluster({
      kubeConfig: serviceAccount,
      namespace: NS,
      clock,
      random: { bytes: (n) => new Uint8Array(n).fill(FIXED_BYTE) },
      rconAddress: () => ({ host: '127.0.0.1', port: peer.endpoint.port }),
      watchBackoffMs: { initial: 20, max: 200 },
    });
    clusters.push(cluster);
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

  /** One pass of the controller, then the StatefulSet controller's part of what it asked for. */
  async function pass(c: LifecycleController): Promise<void> {
    await c.tick();
    await played.syncStatefulSets();
  }

  /** A server created straight in the cluster with desiredState Running, brought up to Running. */
  async function runningServer(cluster: KubernetesCluster, c: LifecycleController, prefix: string): Promise<string> {
    const name = uniqueServerName(prefix);
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
    await pass(c);
    await played.setPodReady(`${name}-0`, true);
    await pass(c);
    return name;
  }

  /**
   * The last warning the game got and the command after it. Every controller here passes over every
   * server of the namespace and probes each (through this test's RCON peer), in the API server's
   * order (by name), so other servers' `list`s can come after.
   */
  const stopCommands = (played: PaperGame) => {
    const at = played.received.lastIndexOf('say This server is stopping now. The world is being saved.');
    return at < 0 ? [] : played.received.slice(at, at + 2);
  };

  const orUndefined = <T>(read: Promise<T>): Promise<T | undefined> =>
    read.catch((err: unknown) => ((err as { code?: number }).code === 404 ? undefined : Promise.reject(err)));
  const server = async (name: string) =>
    (await admin.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ ...DEFAULT_CRD, namespace: NS, name })) as MinecraftServer;
  const statefulSet = (name: string) => orUndefined(admin.makeApiClient(AppsV1Api).readNamespacedStatefulSet({ name, namespace: NS }));
  const service = (name: string) => orUndefined(admin.makeApiClient(CoreV1Api).readNamespacedService({ name, namespace: NS }));
  const pod = (name: string) => orUndefined(admin.makeApiClient(CoreV1Api).readNamespacedPod({ name: `${name}-0`, namespace: NS }));


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

    await pass(c);
    expect(await statefulSet(name)).toMatchObject({ spec: { replicas: 0, serviceName: name, volumeClaimTemplates: [{ metadata: { name: 'world' } }] } });
    // Written by server-side apply under the service's one field manager.
    expect((await statefulSet(name))!.metadata!.managedFields!.map((f) => `${f.manager}/${f.operation}`)).toEqual([`${FIELD_MANAGER}/Apply`]);
    expect((await service(name))!.metadata!.managedFields!.map((f) => `${f.manager}/${f.operation}`)).toEqual([`${FIELD_MANAGER}/Apply`]);
    expect(await service(name)).toMatchObject({ spec: { ports: [{ port: 25565 }, { port: 25575 }] } });
    expect(await pod(name)).toBeUndefined();

    // A short idle period, to show the three-minute grace after first ready still holds.
    await cluster.patchServerSpec(name, { idle: { stopSeconds: 60 } });
    const woken = await external.request(`/api/v1/servers/${name}/wake`, { method: 'POST', headers });
    expect(woken.status).toBe(202);
    await pass(c);
    expect((await statefulSet(name))!.spec!.replicas).toBe(1);
    expect((await server(name)).status).toMatchObject({ phase: 'Starting', ready: false });
    expect(await pod(name)).toBeDefined();

    await pass(c); // the pod is not running yet: still starting
    expect((await server(name)).status?.phase).toBe('Starting');
    await played.setPodReady(`${name}-0`, true);
    await pass(c);
    expect((await server(name)).status).toMatchObject({ phase: 'Running', ready: true, players: { online: 0, max: 20, unknown: false } });
    expect(peer.accepted).toBeGreaterThan(0);

    game.join('Alice');
    game.join('Bob');
    clock.advance(30_000);
    await pass(c);
    expect((await server(name)).status).toMatchObject({ players: { online: 2 } });
    expect((await server(name)).status?.emptySince).toBeUndefined();
    await vi.waitFor(async () => {
      const res = await external.request(`/api/v1/servers/${name}/status`, { headers });
      expect(await res.json()).toMatchObject({ phase: 'Running', ready: true, playersOnline: 2 });
    });

    game.online.splice(0);
    await pass(c);
    expect((await server(name)).status?.emptySince).toBe(clock.now().toISOString());
    clock.advance(61_000); // empty past its idle period, but within 3 minutes of first ready
    await pass(c);
    expect((await server(name)).status?.phase).toBe('Running');
    expect(game.received).not.toContain('save-all flush');

    clock.advance(120_000);
    await pass(c);
    expect(stopCommands(game)).toEqual(['say This server is stopping now. The world is being saved.', 'save-all flush']);
    expect((await server(name)).spec.desiredState).toBe('Stopped');
    expect((await server(name)).status?.phase).toBe('Stopping');
    expect((await statefulSet(name))!.spec!.replicas).toBe(0);
    expect(await pod(name)).toBeUndefined();
    await pass(c);
    expect((await server(name)).status).toMatchObject({ phase: 'Stopped', ready: false, players: { online: 0 } });
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
    await pass(c);
    await played.setPodReady(`${name}-0`, true);
    await pass(c);
    expect((await server(name)).status).toMatchObject({ phase: 'Running', players: { unknown: true } });
    clock.advance(3_600_000);
    await pass(c);
    expect((await server(name)).status).toMatchObject({ phase: 'Running', players: { unknown: true } });
    expect(game.received).not.toContain('save-all flush');
    expect((await cluster.getServerObject(name)).spec.desiredState).toBe('Running');
    await c.stop();
  });

  it('counts a pod ready only when RCON accepts the password, not on TCP accept alone', async () => {
    const { cluster, controller } = await setUp();
    const name = uniqueServerName('auth');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
    const core = admin.makeApiClient(CoreV1Api);
    const setPassword = async (password: string) => {
      const secret = await core.readNamespacedSecret({ name: `${name}-rcon`, namespace: NS });
      await core.replaceNamespacedSecret({ name: `${name}-rcon`, namespace: NS, body: { ...secret, data: { password: Buffer.from(password).toString('base64') } } });
    };
    await setPassword('not-the-password');
    const c = controller('a');
    await pass(c);
    await played.setPodReady(`${name}-0`, true);
    await pass(c);
    expect(peer.refusedLogins).toBe(1);
    expect((await server(name)).status).toMatchObject({ phase: 'Starting', ready: false });
    await setPassword(PASSWORD);
    await pass(c);
    expect((await server(name)).status).toMatchObject({ phase: 'Running', ready: true });
    await c.stop();
  });

  it('reconciles a woken server at once, from its watch, without waiting for a resync', async () => {
    const { cluster } = await setUp();
    const kickClock = new ManualClock('2026-06-01T12:00:00.000Z');
    const c = new LifecycleController({
      cluster,
      lock: leadership('a', kickClock),
      rcon,
      clock: kickClock,
      log: silentLog,
      resyncMs: 3_600_000,
    });
    const name = uniqueServerName('kick');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Stopped', labels: {} });
    c.kick(name); // not started: nothing happens
    expect(c.passesActed).toBe(0);
    c.start();
    await vi.waitFor(async () => expect((await statefulSet(name))?.spec?.replicas).toBe(0));
    await vi.waitFor(async () => expect((await server(name)).status).toMatchObject({ phase: 'Stopped', observedGeneration: 1 }));
    await cluster.setDesiredState(name, 'Running');
    c.kick(name);
    await vi.waitFor(async () => expect((await statefulSet(name))?.spec?.replicas).toBe(1));
    await vi.waitFor(async () => expect((await server(name)).status).toMatchObject({ phase: 'Starting', observedGeneration: 2 }));
    await c.stop();
  });

  it('runs as the cluster task: leads by a coordination.k8s.io Lease, acts, listens for desired-state changes while started, and gives the Lease up when stopped', async () => {
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
    await vi.waitFor(async () => expect((await statefulSet(name))?.spec?.replicas).toBe(0));
    expect(await registry.metrics()).toContain('felis_lifecycle_leader 1');
    const leases = admin.makeApiClient(CoordinationV1Api);
    const held = await leases.readNamespacedLease({ name: CONTROLLER_LEASE, namespace: NS });
    expect(held.spec).toMatchObject({ leaseDurationSeconds: 15, holderIdentity: expect.stringContaining('_') });
    // The database's leadership is not what it leads by on Kubernetes.
    expect(lock.holds()).toBe(false);
    for (const listener of listeners) listener(name);
    await task!.stop();
    expect(listeners.size).toBe(0);
    expect((await leases.readNamespacedLease({ name: CONTROLLER_LEASE, namespace: NS })).spec?.holderIdentity).toBeUndefined();
    expect(await registry.metrics()).toContain('felis_lifecycle_leader 0');
  });

  it('stops a running server cleanly when asked (warning, save-all flush, then scale to zero)', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = await runningServer(cluster, c, 'stop');
    await cluster.setDesiredState(name, 'Stopped');
    await pass(c);
    expect(stopCommands(game)).toEqual(['say This server is stopping now. The world is being saved.', 'save-all flush']);
    expect((await statefulSet(name))!.spec!.replicas).toBe(0);
    await pass(c);
    expect((await server(name)).status?.phase).toBe('Stopped');
    await c.stop();
  });

  it('stops a server in an emergency without the clean save: no warning, no save-all, the pod gone, then Stopped', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = await runningServer(cluster, c, 'estop');
    const before = game.received.length;
    await cluster.emergencyStop(name);
    expect(await pod(name)).toBeUndefined();
    expect((await statefulSet(name))!.spec!.replicas).toBe(0);
    await pass(c);
    expect((await server(name)).status?.phase).toBe('Stopped');
    expect(game.received.slice(before).filter((c) => c.startsWith('say') || c.startsWith('save-all'))).toEqual([]);
    await c.stop();
  });

  it('rolls a spec change into the StatefulSet at the next start, never under a running server', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = await runningServer(cluster, c, 'roll');
    const container = async () => ((await statefulSet(name))!.spec as { template: { spec: { containers: Array<{ image: string; resources: { limits: Record<string, string> } }> } } }).template.spec.containers[0]!;
    await cluster.patchServerSpec(name, { image: 'itzg/minecraft-server:java21-graalvm', memory: '6Gi', resources: { cpu: '2' } });
    await pass(c);
    expect((await container()).image).toBe('itzg/minecraft-server:java21');

    await cluster.setDesiredState(name, 'Stopped');
    await pass(c);
    await pass(c);
    expect((await server(name)).status?.phase).toBe('Stopped');
    expect((await container()).image).toBe('itzg/minecraft-server:java21');
    await cluster.setDesiredState(name, 'Running');
    await pass(c);
    expect(await container()).toMatchObject({ image: 'itzg/minecraft-server:java21-graalvm', resources: { limits: { memory: '6Gi', cpu: '2' } } });
    expect((await statefulSet(name))!.spec!.replicas).toBe(1);

    // A limit the spec no longer names is gone from the template, not merged over.
    await cluster.setDesiredState(name, 'Stopped');
    await pass(c);
    await pass(c);
    await cluster.patchServerSpec(name, { resources: { cpu: null } } as never);
    await cluster.setDesiredState(name, 'Running');
    await pass(c);
    expect((await container()).resources.limits).toEqual({ memory: '6Gi' });
    await c.stop();
  });

  it('recreates a start that times out three times with doubling back-off, then gives up; a wake retries with a fresh budget', async () => {
    const { clock, cluster, controller } = await setUp();
    const name = uniqueServerName('hang');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
    await cluster.patchServerSpec(name, { startTimeoutSeconds: 60 });
    const c = controller('a');
    await pass(c);
    expect((await server(name)).status?.phase).toBe('Starting');
    const uids = [(await pod(name))!.metadata!.uid];
    for (const backoffSeconds of [10, 20, 40]) {
      clock.advance(60_000);
      await pass(c);
      const { status } = await server(name);
      expect(Date.parse(status!.retryAt!) - clock.now().getTime()).toBe(backoffSeconds * 1000);
      clock.advance(backoffSeconds * 1000 - 1);
      await pass(c);
      expect((await pod(name))!.metadata!.uid).toBe(uids.at(-1)); // still backing off
      clock.advance(1);
      await pass(c);
      uids.push((await pod(name))!.metadata!.uid);
      expect(new Set(uids).size).toBe(uids.length); // a new pod
    }
    expect((await server(name)).status).toMatchObject({ phase: 'Starting', autoRestarts: 3 });
    clock.advance(60_000);
    await pass(c);
    expect((await server(name)).status).toMatchObject({ phase: 'Failed', startGaveUp: true, autoRestarts: 3 });
    expect((await statefulSet(name))!.spec!.replicas).toBe(0);
    await pass(c); // a given-up start stays down
    expect((await server(name)).status?.phase).toBe('Failed');

    // The owner's wake from the panel: the pod comes back with a fresh budget, and this time it comes up.
    await cluster.recreatePod(name);
    expect((await server(name)).status).toMatchObject({ phase: 'Starting', autoRestarts: 0, startGaveUp: false });
    await pass(c);
    await played.setPodReady(`${name}-0`, true);
    await pass(c);
    expect((await server(name)).status).toMatchObject({ phase: 'Running', ready: true });
    await c.stop();
  });

  it('gives up at once on a spec that can never start', async () => {
    const { cluster, controller } = await setUp();
    const name = uniqueServerName('bad');
    await cluster.createServer({ name, subdomain: name, image: 'Not An Image!', desiredState: 'Running', labels: {} });
    const c = controller('a');
    await pass(c);
    expect((await server(name)).status).toMatchObject({ phase: 'Failed', startGaveUp: true, autoRestarts: 0 });
    expect((await server(name)).status?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False', reason: 'InvalidSpec' }));
    expect(await statefulSet(name)).toBeUndefined();
    await c.stop();
  });

  it('retires a server: stops it cleanly and removes its StatefulSet and Service', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = await runningServer(cluster, c, 'old');
    await cluster.patchServerSpec(name, { retired: true });
    await pass(c);
    expect(game.received).toContain('save-all flush');
    expect(await statefulSet(name)).toBeUndefined();
    expect(await service(name)).toBeUndefined();
    expect((await server(name)).status).toMatchObject({ phase: 'Stopped', ready: false });
    expect((await server(name)).status?.conditions).toContainEqual(expect.objectContaining({ type: 'Retired', status: 'True' }));
    await c.stop();
  });
});
