import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApps, createTestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { applyManifest, applyServiceRbac, PlayedCluster, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../../../../test/helpers/kube-api.js';
import { startRconPeer, type RconPeer } from '../../../../test/helpers/rcon-peer.js';
import { uniqueServerName } from '../../../../test/helpers/servers.js';
import { TcpProxy } from '../../../../test/helpers/tcp-proxy.js';
import { createUser, signIn } from '../../../../test/helpers/sessions.js';
import { Leadership } from '../../../coordination/index.js';
import { ManualClock } from '../../../lib/clock.js';
import { createLogger } from '../../../lib/logger.js';
import { RconConnection } from '../../rcon/client.js';
import { PaperGame } from '../simulated-paper.js';
import { FIELD_MANAGER, KubernetesCluster } from './adapter.js';
import { CONTROLLER_LEASE, EULA_REFUSAL, LifecycleController, type RconOpener } from './controller.js';
import { LeaseLock } from './lease.js';
import { DEFAULT_CRD, SERVER_FINALIZER, type MinecraftServer } from './resource.js';
import { forgetDeletedServer } from '../../../features/servers/index.js';
import { forgetServerSchedules } from '../../../features/schedules/index.js';
import { serverSchedules } from '../../../db/schema/schedules.js';
import { auditLog } from '../../../db/schema/audit.js';
import { serverClaims, serverWakes } from '../../../db/schema/servers.js';
import { and, eq } from 'drizzle-orm';

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
 * ServiceAccount with deploy/base/rbac.yaml's Role (a verb it needs and lacks fails here), in a namespace
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
    await applyManifest(admin, 'base/crd.yaml');
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

  async function setUp(options: { game?: PaperGame; rconPort?: (name: string) => number | undefined; eula?: boolean } = {}) {
    game = options.game ?? new PaperGame();
    peer = await startRconPeer({ password: PASSWORD, game });
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const cluster = new KubernetesCluster({
      kubeConfig: serviceAccount,
      namespace: NS,
      clock,
      random: { bytes: (n) => new Uint8Array(n).fill(FIXED_BYTE) },
      rconAddress: (name) => ({ host: '127.0.0.1', port: options.rconPort?.(name) ?? peer.endpoint.port }),
      watchBackoffMs: { initial: 20, max: 200 },
      eula: options.eula ?? true,
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

  /** The service account's kubeconfig through a TCP relay that the test can cut (proxy.blackHole()). */
  async function relayedServiceAccount(): Promise<{ proxy: TcpProxy; relayedConfig: KubeConfig }> {
    const proxy = await TcpProxy.start(Number(new URL(serviceAccount.getCurrentCluster()!.server).port));
    const relayedConfig = new KubeConfig();
    relayedConfig.loadFromString(serviceAccount.exportConfig());
    relayedConfig.clusters = relayedConfig.clusters.map((x) => ({ ...x, server: `https://127.0.0.1:${proxy.port}` }));
    return { proxy, relayedConfig };
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
    const { cluster } = await setUp();
    const registry = new Registry();
    const listeners = new Set<(name: string) => void>();
    const [task, ...others] = cluster.tasks({
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

  it('makes kubectl delete run the clean stop and remove the database rows (its schedules included) before the server goes (its finalizer), and keeps the server while the database refuses', async () => {
    const { clock, cluster } = await setUp();
    const deps = createTestDeps(database(), { overrides: { cluster: cluster as never, clock } });
    const owner = await createUser(deps);
    let databaseDown = false;
    const forgotten: string[] = [];
    const c = new LifecycleController({
      cluster,
      lock: leadership('a', clock),
      rcon,
      clock,
      log: silentLog,
      forgetServer: async (n) => {
        if (databaseDown) throw new Error('database unreachable');
        await forgetDeletedServer(deps, n, [forgetServerSchedules]);
        forgotten.push(n);
      },
    });
    const name = await runningServer(cluster, c, 'kdel');
    await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId: owner.id, claimedAt: clock.now() });
    await deps.database.db.insert(serverWakes).values({ serverName: name, lastWakeAt: clock.now() });
    await deps.database.db
      .insert(serverSchedules)
      .values({ serverName: name, ownerId: owner.id, action: 'restart', weekdays: 127, timezone: 'UTC', nextRunAt: clock.now(), createdBy: owner.id, createdAt: clock.now() });
    expect((await server(name)).metadata.finalizers).toEqual([SERVER_FINALIZER]);
    const rows = async () => ({
      claims: (await deps.database.db.select().from(serverClaims).where(eq(serverClaims.serverName, name))).length,
      wakes: (await deps.database.db.select().from(serverWakes).where(eq(serverWakes.serverName, name))).length,
      schedules: (await deps.database.db.select().from(serverSchedules).where(eq(serverSchedules.serverName, name))).length,
    });

    // kubectl delete: the API server marks it and keeps it while the finalizer is there.
    const custom = admin.makeApiClient(CustomObjectsApi);
    await custom.deleteNamespacedCustomObject({ ...DEFAULT_CRD, namespace: NS, name });
    expect((await server(name)).metadata.deletionTimestamp).toBeDefined();
    databaseDown = true;
    await pass(c);
    // The clean stop first: the players warned, the world saved, then the set at 0 (its pod gone).
    expect(stopCommands(game)).toEqual(['say This server is stopping now. The world is being saved.', 'save-all flush']);
    expect((await statefulSet(name))!.spec!.replicas).toBe(0);
    expect(await pod(name)).toBeUndefined();
    expect((await server(name)).status?.phase).toBe('Stopping');
    const events = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.name=${name},reason=Deleting` });
    expect(events.items.map((e) => e.message)).toEqual([`pod ${name}-0 stopped cleanly: ${name} is being deleted`]);

    // The pod is gone but the database does not answer: the server stays, its rows too.
    await pass(c);
    expect((await server(name)).metadata.finalizers).toEqual([SERVER_FINALIZER]);
    expect(await rows()).toEqual({ claims: 1, wakes: 1, schedules: 1 });
    expect(forgotten).toEqual([]);

    databaseDown = false;
    await pass(c);
    expect(forgotten).toEqual([name]);
    await expect(server(name)).rejects.toMatchObject({ code: 404 });
    expect(await rows()).toEqual({ claims: 0, wakes: 0, schedules: 0 });
    const [audit] = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.target, name), eq(auditLog.action, 'server.deleted_in_cluster')));
    expect(audit).toMatchObject({ actor: 'system', detail: { rows: 3 } });
    // Once only: the clean stop was not sent again on the later passes.
    expect(game.received.filter((line) => line === 'save-all flush')).toHaveLength(1);
    await c.stop();
  });

  it('starts no game until the operator accepted the Minecraft EULA (KUBE_EULA): the start gives up saying so, and the pods are told EULA=TRUE only once accepted', async () => {
    const { cluster, controller } = await setUp({ eula: false });
    const c = controller('a');
    const name = uniqueServerName('eula');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
    await pass(c);
    expect((await statefulSet(name))!.spec!.replicas).toBe(0);
    expect(await pod(name)).toBeUndefined();
    const refused = (await server(name)).status;
    expect(refused).toMatchObject({ phase: 'Failed', startGaveUp: true });
    expect(refused?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False', reason: 'EulaNotAccepted', message: EULA_REFUSAL }));
    expect(EULA_REFUSAL).toMatch(/KUBE_EULA=true/);
    const env = (await statefulSet(name))!.spec!.template.spec!.containers[0]!.env!;
    expect(env).toContainEqual({ name: 'EULA', value: 'FALSE' });
    const events = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.name=${name},reason=StartGaveUp` });
    expect(events.items.map((e) => e.message)).toEqual([`EulaNotAccepted: ${EULA_REFUSAL}`]);
    await c.stop();

    // Accepted (the service restarted with KUBE_EULA=true), a wake starts it, with EULA=TRUE in its pod.
    const accepted = new KubernetesCluster({ kubeConfig: serviceAccount, namespace: NS, clock: new ManualClock('2026-06-01T12:00:00.000Z'), watchBackoffMs: { initial: 20, max: 200 }, eula: true });
    clusters.push(accepted);
    const again = new LifecycleController({ cluster: accepted, lock: leadership('b', new ManualClock('2026-06-01T12:00:00.000Z')), rcon, clock: new ManualClock('2026-06-01T12:00:00.000Z'), log: silentLog });
    await accepted.recreatePod(name);
    await pass(again);
    expect((await statefulSet(name))!.spec!.replicas).toBe(1);
    expect((await server(name)).status?.phase).toBe('Starting');
    expect((await pod(name))!.spec!.containers[0]!.env).toContainEqual({ name: 'EULA', value: 'TRUE' });
    await again.stop();
  });

  it('lets a server that was never started go at once when deleted, and a server without the controller\'s finalizer gets it at its first reconcile', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = uniqueServerName('kdel0');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Stopped', labels: {} });
    expect((await server(name)).metadata.finalizers).toBeUndefined();
    await pass(c);
    expect((await server(name)).metadata.finalizers).toEqual([SERVER_FINALIZER]);
    await admin.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({ ...DEFAULT_CRD, namespace: NS, name });
    await pass(c);
    await expect(server(name)).rejects.toMatchObject({ code: 404 });
    await c.stop();
  });

  it('writes status, conditions and observedGeneration from the first reconcile, follows every spec change, and writes nothing when nothing changed', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = uniqueServerName('gen');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Stopped', labels: {} });
    await pass(c);
    const first = await server(name);
    expect(first.status).toMatchObject({ phase: 'Stopped', ready: false, observedGeneration: first.metadata.generation });
    expect(first.status?.conditions?.map((x) => [x.type, x.status, x.reason])).toEqual([
      ['Ready', 'False', 'Stopped'],
      ['Progressing', 'False', 'Stopped'],
      ['Degraded', 'False', 'AsExpected'],
    ]);
    // A spec change on a Stopped server (a move's node, a new image) is observed, not left behind.
    await cluster.patchServerSpec(name, { image: 'itzg/minecraft-server:java17' });
    await pass(c);
    const changed = await server(name);
    expect(changed.metadata.generation).toBe((first.metadata.generation ?? 0) + 1);
    expect(changed.status?.observedGeneration).toBe(changed.metadata.generation);
    expect(changed.status?.conditions?.every((x) => x.observedGeneration === changed.metadata.generation)).toBe(true);
    // At rest, passes write nothing: the object is not touched again.
    await pass(c);
    await pass(c);
    expect((await server(name)).metadata.resourceVersion).toBe(changed.metadata.resourceVersion);

    const running = await runningServer(cluster, c, 'still');
    const before = (await server(running)).metadata.resourceVersion;
    await pass(c);
    await pass(c);
    expect((await server(running)).metadata.resourceVersion).toBe(before);
    await c.stop();
  });

  it('says Ready only when the pod is Ready as well as RCON answering, and records the node the pod runs on', async () => {
    const { cluster, controller } = await setUp();
    const c = controller('a');
    const name = uniqueServerName('podready');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
    await pass(c);
    await admin.makeApiClient(CoreV1Api).createNamespacedPodBinding({
      name: `${name}-0`,
      namespace: NS,
      body: { metadata: { name: `${name}-0` }, target: { apiVersion: 'v1', kind: 'Node', name: `${NS}-node` } },
    });
    await played.setPodReady(`${name}-0`, false);
    await pass(c);
    const notReady = (await server(name)).status;
    expect(notReady).toMatchObject({ phase: 'Running', ready: false, node: `${NS}-node` });
    expect(notReady?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False' }));
    expect(notReady?.conditions).toContainEqual(expect.objectContaining({ type: 'Degraded', status: 'True', reason: 'NotReady' }));
    await played.setPodReady(`${name}-0`, true);
    await pass(c);
    const ready = (await server(name)).status;
    expect(ready).toMatchObject({ phase: 'Running', ready: true, node: `${NS}-node` });
    expect(ready?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True', reason: 'RconAnswered' }));
    expect((await cluster.listServers()).servers.find((s) => s.spec.name === name)?.status.node).toBe(`${NS}-node`);
    await c.stop();
  });

  it('scales a Stopped server\'s StatefulSet back to 0 when someone scales it up, from the watch, with one aggregated Event', async () => {
    const { cluster, clock } = await setUp();
    const c = new LifecycleController({ cluster, lock: leadership('a', clock), rcon, clock, log: silentLog, resyncMs: 3_600_000 });
    const name = uniqueServerName('drift');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Stopped', labels: {} });
    c.start();
    await vi.waitFor(async () => expect((await server(name)).status?.phase).toBe('Stopped'));
    const apps = admin.makeApiClient(AppsV1Api);
    for (let round = 0; round < 2; round += 1) {
      await apps.patchNamespacedStatefulSetScale({ name, namespace: NS, body: { spec: { replicas: 1 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      await vi.waitFor(async () => expect((await statefulSet(name))?.spec?.replicas).toBe(0));
    }
    const events = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.name=${name},reason=ScaledBack` });
    expect(events.items.map((e) => [e.type, e.count])).toEqual([['Warning', 2]]);
    expect((await server(name)).status?.phase).toBe('Stopped');
    await c.stop();
  });

  it('carries out a wake while the probes of hung games are still waiting: one hung game slows only itself', async () => {
    const hung = await startHungPeer();
    const hungNames = new Set<string>();
    const { cluster } = await setUp({ rconPort: (name) => (hungNames.has(name) ? hung.port : undefined) });
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const c = new LifecycleController({ cluster, lock: leadership('a', clock), rcon, clock, log: silentLog, startProbeMs: 50, resyncMs: 3_600_000 });
    for (let i = 0; i < 3; i += 1) {
      const name = uniqueServerName('frozen');
      hungNames.add(name);
      await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Running', labels: {} });
      // A frozen JVM: its RCON accepts and never answers, for longer than this test runs.
      await cluster.patchServerSpec(name, { readinessTimeoutSeconds: 3_600 });
    }
    const woken = uniqueServerName('woken');
    await cluster.createServer({ name: woken, subdomain: woken, image: 'itzg/minecraft-server:java21', desiredState: 'Stopped', labels: {} });
    c.start();
    await vi.waitFor(async () => expect((await statefulSet(woken))?.spec?.replicas).toBe(0));
    await played.syncStatefulSets();
    for (const name of hungNames) await played.setPodReady(`${name}-0`, true);
    await vi.waitFor(() => expect(hung.open()).toBe(3), { timeout: 20_000 });

    await cluster.setDesiredState(woken, 'Running');
    c.kick(woken);
    await vi.waitFor(async () => expect((await statefulSet(woken))?.spec?.replicas).toBe(1));
    // The hung probes are all still waiting for an answer.
    expect(hung.open()).toBe(3);
    for (const name of hungNames) expect((await server(name)).status?.phase).toBe('Starting');
    await c.stop();
    hung.close();
  });

  it('hands the work to the other replica when the leader is cut off from the API server (its Lease lapses), and the other carries out a wake', async () => {
    const { cluster } = await setUp();
    const { proxy, relayedConfig } = await relayedServiceAccount();
    const cutCluster = new KubernetesCluster({ kubeConfig: relayedConfig, namespace: NS, rconAddress: () => ({ host: '127.0.0.1', port: peer.endpoint.port }), watchBackoffMs: { initial: 20, max: 200 } });
    clusters.push(cutCluster);
    const timing = { leaseDurationMs: 2_000, renewDeadlineMs: 1_000, retryPeriodMs: 100 };
    const leaseName = uniqueServerName('lease');
    const replica = (c: KubernetesCluster, identity: string) =>
      new LifecycleController({
        cluster: c,
        lock: new LeaseLock({ kubeConfig: c.kubeConfig, namespace: NS, name: leaseName, identity, timing }),
        rcon,
        clock: new ManualClock('2026-06-01T12:00:00.000Z'),
        log: silentLog,
        leaseRetryMs: timing.retryPeriodMs,
        resyncMs: 3_600_000,
      });
    const aLock = new LeaseLock({ kubeConfig: relayedConfig, namespace: NS, name: leaseName, identity: 'a', timing });
    const a = new LifecycleController({
      cluster: cutCluster,
      lock: aLock,
      rcon,
      clock: new ManualClock('2026-06-01T12:00:00.000Z'),
      log: silentLog,
      leaseRetryMs: timing.retryPeriodMs,
      resyncMs: 3_600_000,
    });
    const b = replica(cluster, 'b');
    a.start();
    const name = uniqueServerName('handover');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: 'Stopped', labels: {} });
    await vi.waitFor(async () => expect((await statefulSet(name))?.spec?.replicas).toBe(0));
    b.start();
    expect(b.passesActed).toBe(0);

    proxy.blackHole();
    // The cut replica steps down by itself (its renewals hang), and acts no more.
    await vi.waitFor(() => expect(aLock.holds()).toBe(false), { timeout: 20_000 });
    const acted = a.passesActed;
    await cluster.setDesiredState(name, 'Running');
    await vi.waitFor(async () => expect((await statefulSet(name))?.spec?.replicas).toBe(1), { timeout: 20_000 });
    expect(b.passesActed).toBeGreaterThan(0);
    expect(a.passesActed).toBe(acted);
    const lease = await admin.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: leaseName, namespace: NS });
    expect(lease.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    proxy.restore();
    await Promise.all([a.stop(), b.stop()]);
    await proxy.close();
  });

  it('keeps /readyz up through an API-server blip once its caches have synced, and not before', async () => {
    const { proxy, relayedConfig } = await relayedServiceAccount();
    const cut = new KubernetesCluster({ kubeConfig: relayedConfig, namespace: NS, watchBackoffMs: { initial: 20, max: 200 } });
    clusters.push(cut);
    const { internal } = createTestApps(createTestDeps(database(), { overrides: { cluster: cut as never } }));
    expect((await internal.request('/readyz')).status).toBe(200);
    proxy.blackHole();
    expect((await internal.request('/readyz')).status).toBe(503); // nothing cached yet: the API server must answer
    proxy.restore();
    cut.caches.start();
    await vi.waitFor(() => expect(cut.cachesSynced()).toBe(true));
    proxy.blackHole();
    expect((await internal.request('/readyz')).status).toBe(200);
    proxy.restore();
    await proxy.close();
  });
});

/** A TCP port that accepts and never answers (a frozen game's RCON). */
async function startHungPeer(): Promise<{ port: number; open(): number; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    open: () => sockets.size,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
