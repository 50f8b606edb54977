import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, BatchV1Api, CoreV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDeps, type TestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { applyManifest, applyServiceRbac, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../helpers/kube-api.js';
import { useTempDir, worldManifest } from '../helpers/worlds.js';
import { LocalBackupStore } from '../../src/adapters/backup-store/local.js';
import { KubernetesCluster } from '../../src/adapters/cluster/kubernetes/adapter.js';
import { DEFAULT_CRD } from '../../src/adapters/cluster/kubernetes/resource.js';
import { statefulSetFor } from '../../src/adapters/cluster/kubernetes/workloads.js';
import { KubernetesWorldJobRunner, WORLD_JOB_CONTAINER, worldJobName } from '../../src/adapters/cluster/kubernetes/world-jobs.js';
import { SELECTED_NODE_ANNOTATION } from '../../src/adapters/cluster/kubernetes/world-volumes.js';
import { GAME_NODE_LABEL } from '../../src/adapters/cluster/nodes.js';
import { moveClaimName } from '../../src/adapters/cluster/world-volumes.js';
import { main as worldJobCli } from '../../src/cli/world-job.js';
import { serverMoves } from '../../src/db/schema/nodes.js';
import type { SessionContext } from '../../src/http/session.js';
import { beginMove, MoveInterrupted, retryMove, type MoveStage } from '../../src/features/nodes/moves.js';
import { LOCK_LEASE_MS } from '../../src/features/worlds/jobs/lock.js';
import { JobTracker } from '../../src/features/worlds/volumes/runtime.js';
import { ManualClock } from '../../src/lib/clock.js';

/**
 * A server move between node-local volumes against a real kube-apiserver, as the service's own
 * ServiceAccount under deploy/base/rbac.yaml: the claim on the target node, the switch of the
 * MinecraftServer (its CRD keeps spec.worldClaim), the StatefulSet made again on the new claim,
 * Events for each step. There is no controller-manager or kubelet: the test plays the Job
 * controller and the kubelet, running each world Job's CLI on a folder standing for its claim.
 */

const database = useTestDatabase();

describe.skipIf(!realApiServer())('server moves between node-local volumes on a real API server', () => {
  const api = useApiNamespace('felis-moves');
  const tempDir = useTempDir('felis-kube-moves-');
  let admin: KubeConfig;
  let namespace: string;
  let serviceConfig: KubeConfig;
  const nodes: string[] = [];

  beforeAll(async () => {
    ({ kubeConfig: admin, namespace } = api());
    await applyManifest(admin, 'base/crd.yaml');
    await applyServiceRbac(admin, namespace);
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    for (const suffix of ['a', 'b']) {
      const name = `${namespace}-${suffix}`;
      nodes.push(name);
      await core.createNode({ body: { metadata: { name, labels: { [GAME_NODE_LABEL]: 'true', 'kubernetes.io/hostname': name } } } });
      await core.replaceNodeStatus({
        name,
        body: {
          // The whole object goes back: its labels too (a status write replaces the metadata it is given).
          metadata: { name, labels: { [GAME_NODE_LABEL]: 'true', 'kubernetes.io/hostname': name }, resourceVersion: (await core.readNode({ name })).metadata?.resourceVersion },
          status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date(), lastTransitionTime: new Date() }], capacity: { cpu: '4', memory: '16Gi', pods: '110' }, allocatable: { cpu: '4', memory: '16Gi', pods: '110' } },
        },
      });
    }
    for (let tries = 0; ; tries++) {
      try {
        serviceConfig = await serviceAccountKubeConfig(admin, namespace);
        await new KubernetesCluster({ kubeConfig: serviceConfig, namespace }).listServers();
        break;
      } catch (err) {
        if (tries >= 100) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
  afterAll(async () => {
    for (const name of nodes) await admin?.makeApiClient(CoreV1Api).deleteNode({ name }).catch(() => undefined);
  });

  async function setUp(options: { sharedWorldVolumes?: boolean } = {}) {
    const root = tempDir();
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const cluster = new KubernetesCluster({ kubeConfig: serviceConfig, namespace, clock, watchBackoffMs: { initial: 20, max: 200 }, ...options });
    const deps = createTestDeps(database(), { overrides: { cluster, clock, worlds: { store: new LocalBackupStore(join(root, 'backups')), jobs: new JobTracker() } } });
    deps.worlds.runner = new KubernetesWorldJobRunner({ client: cluster, namespace, image: 'felis:test', storeSecret: 'store', deadlineSeconds: 600, log: deps.log, pollMs: 10 });
    const name = `mv-${randomBytes(3).toString('hex')}`;
    for (let tries = 0; ; tries++) {
      try {
        await cluster.createServer({ name, subdomain: name, labels: {}, desiredState: 'Stopped', storage: '5Gi' });
        break;
      } catch (err) {
        if (tries >= 50) throw err; // the CRD's schema is still being published
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await cluster.nodes.placeServer(name, nodes[0]);
    await deps.serverCache.ready();
    for (let tries = 0; deps.serverCache.get(name)?.resource.spec.node !== nodes[0]; tries++) {
      if (tries > 100) throw new Error('the cache never saw the placement');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // What the controllers made before the move: the StatefulSet from its claim template, and its claim.
    const object = await cluster.getServerObject(name);
    await admin.makeApiClient(AppsV1Api).createNamespacedStatefulSet({ namespace, body: statefulSetFor(object, DEFAULT_CRD) });
    await admin.makeApiClient(CoreV1Api).createNamespacedPersistentVolumeClaim({
      namespace,
      body: { metadata: { name: `world-${name}-0` }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } } },
    });
    const volumes = join(root, 'claims');
    const source = join(volumes, `world-${name}-0`);
    mkdirSync(join(source, 'world', 'region'), { recursive: true });
    writeFileSync(join(source, 'server.properties'), `motd=${name}\n`);
    writeFileSync(join(source, 'world', 'region', 'r.0.0.mca'), Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 31) & 0xff)));
    const user = { userId: 'staff', role: 'admin', tokenHash: 'x', inSetup: false } as SessionContext;
    return { deps, cluster, name, root, volumes, source, before: worldManifest(source), user };
  }

  /** The Job controller and the kubelet for one world Job: its pod on the pinned node runs the CLI, then the Job completes. */
  async function playJob(setup: { name: string; root: string; volumes: string }, job: V1Job): Promise<{ claim: string; node?: string; op: string }> {
    const core = admin.makeApiClient(CoreV1Api);
    const batch = admin.makeApiClient(BatchV1Api);
    const pod = job.spec!.template.spec!;
    const claim = pod.volumes!.find((v) => v.name === 'world')!.persistentVolumeClaim!.claimName;
    const node = pod.nodeSelector?.['kubernetes.io/hostname'];
    const args = pod.containers[0]!.args!;
    const folder = join(setup.volumes, claim);
    mkdirSync(folder, { recursive: true });
    const log = join(setup.root, `termination-${Math.random()}`);
    const write = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    let code: number;
    try {
      code = await worldJobCli(args.map((a) => (a === '/data' ? folder : a)), { WORLD_JOB_LOCAL_STORE: join(setup.root, 'backups'), TERMINATION_LOG: log });
    } finally {
      process.stdout.write = write;
    }
    const podName = `${job.metadata!.name}-${randomBytes(3).toString('hex')}`;
    const podSpec = { ...(node ? { nodeName: node } : {}), restartPolicy: 'Never', automountServiceAccountToken: false, containers: [{ name: WORLD_JOB_CONTAINER, image: 'felis:test' }] };
    await core.createNamespacedPod({ namespace, body: { metadata: { name: podName, labels: job.spec!.template.metadata!.labels }, spec: podSpec } });
    const now = new Date();
    await core.replaceNamespacedPodStatus({
      name: podName,
      namespace,
      body: {
        // The whole object goes back: its labels too (a status write replaces the metadata it is given).
        metadata: { name: podName, namespace, labels: job.spec!.template.metadata!.labels, resourceVersion: (await core.readNamespacedPod({ name: podName, namespace })).metadata!.resourceVersion },
        spec: podSpec,
        status: {
          phase: code === 0 ? 'Succeeded' : 'Failed',
          containerStatuses: [
            { name: WORLD_JOB_CONTAINER, image: 'felis:test', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: code, message: readFileSync(log, 'utf8'), startedAt: now, finishedAt: now } } },
          ],
        },
      },
    });
    const current = await batch.readNamespacedJob({ name: job.metadata!.name!, namespace });
    await batch.replaceNamespacedJobStatus({
      name: job.metadata!.name!,
      namespace,
      body: {
        ...current,
        status: {
          startTime: now,
          ...(code === 0 ? { succeeded: 1, completionTime: now } : { failed: 1 }),
          conditions: [{ type: code === 0 ? 'Complete' : 'Failed', status: 'True', lastProbeTime: now, lastTransitionTime: now }],
        },
      },
    });
    return { claim, ...(node ? { node } : {}), op: args[0]! };
  }

  /** Plays every world Job of the server until told to stop. */
  async function kubelet(setup: { name: string; root: string; volumes: string }, seen: Array<{ claim: string; node?: string; op: string }>, stop: () => boolean) {
    const batch = admin.makeApiClient(BatchV1Api);
    while (!stop()) {
      const job = await batch.readNamespacedJob({ name: worldJobName(setup.name), namespace }).catch(() => undefined);
      if (!job || job.metadata?.deletionTimestamp || job.status?.conditions?.length) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      seen.push(await playJob(setup, job));
    }
  }

  async function settled(deps: TestDeps, id: string) {
    await deps.worlds.jobs.idle();
    const [row] = await deps.database.db.select().from(serverMoves).where(eq(serverMoves.id, id));
    return row!;
  }

  /** A claim deleted: gone, or held by its protection finalizer (no controller-manager here to remove it). */
  async function released(claim: string): Promise<boolean> {
    try {
      const pvc = await admin.makeApiClient(CoreV1Api).readNamespacedPersistentVolumeClaim({ name: claim, namespace });
      return pvc.metadata?.deletionTimestamp !== undefined;
    } catch (err) {
      return (err as { code?: number }).code === 404;
    }
  }

  async function expectMoved(setup: Awaited<ReturnType<typeof setUp>>, id: string) {
    const claim = moveClaimName(setup.name, id);
    const object = await setup.cluster.getServerObject(setup.name);
    expect(object.spec).toMatchObject({ nodeName: nodes[1], worldClaim: claim });
    const made = await admin.makeApiClient(CoreV1Api).readNamespacedPersistentVolumeClaim({ name: claim, namespace });
    expect(made.metadata?.annotations?.[SELECTED_NODE_ANNOTATION]).toBe(nodes[1]);
    expect(made.spec?.resources?.requests?.storage).toBe('5Gi');
    expect(await released(`world-${setup.name}-0`)).toBe(true);
    // The set made from the claim template is gone; the controller's next one, on the new claim, is valid.
    const apps = admin.makeApiClient(AppsV1Api);
    await expect(apps.readNamespacedStatefulSet({ name: setup.name, namespace })).rejects.toMatchObject({ code: 404 });
    const set = await apps.createNamespacedStatefulSet({ namespace, body: statefulSetFor(object, DEFAULT_CRD) });
    expect(set.spec?.volumeClaimTemplates ?? []).toEqual([]);
    expect(set.spec?.template.spec?.volumes?.find((v) => v.name === 'world')?.persistentVolumeClaim?.claimName).toBe(claim);
    expect(set.spec?.template.spec?.nodeSelector).toEqual({ 'kubernetes.io/hostname': nodes[1] });
    expect(worldManifest(join(setup.volumes, claim))).toEqual(setup.before);
    expect(await setup.cluster.volumeOf(setup.name)).toEqual({ claim, node: nodes[1] });
  }

  it('archives on the source claim, restores into a claim made on the target node, switches the StatefulSet and releases the old claim, with Events', async () => {
    const setup = await setUp();
    const seen: Array<{ claim: string; node?: string; op: string }> = [];
    let done = false;
    const playing = kubelet(setup, seen, () => done);
    try {
      const move = await beginMove(setup.deps, setup.user, setup.name, nodes[1]!, undefined);
      expect(await settled(setup.deps, move.id)).toMatchObject({ state: 'succeeded', stage: 'succeeded', switched: true });
      expect(seen).toEqual([
        { claim: `world-${setup.name}-0`, node: nodes[0], op: 'backup' },
        { claim: moveClaimName(setup.name, move.id), node: nodes[1], op: 'restore' },
      ]);
      await expectMoved(setup, move.id);
      const events = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace });
      const reasons = events.items.filter((e) => e.involvedObject.name === setup.name).map((e) => e.reason);
      expect(reasons).toEqual(expect.arrayContaining(['MoveArchived', 'MoveRestored', 'MoveSwitched', 'MoveSucceeded']));
    } finally {
      done = true;
      await playing;
      await setup.cluster.close();
    }
  });

  it('on shared volumes moves only the placement, with its Events (aggregated, from this replica\'s pod)', async () => {
    const setup = await setUp({ sharedWorldVolumes: true });
    const pod = process.env.POD_NAME;
    process.env.POD_NAME = 'felis-6f7d8-x2k4q';
    try {
      const move = await beginMove(setup.deps, setup.user, setup.name, nodes[1]!, undefined);
      expect(await settled(setup.deps, move.id)).toMatchObject({ state: 'succeeded', stage: 'succeeded', switched: true });
      expect((await setup.cluster.getServerObject(setup.name)).spec).toMatchObject({ nodeName: nodes[1] });
      expect((await setup.cluster.getServerObject(setup.name)).spec.worldClaim).toBeUndefined();
      const events = (await admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace })).items.filter((e) => e.involvedObject.name === setup.name);
      expect(events.map((e) => [e.reason, e.message])).toEqual(
        expect.arrayContaining([
          ['MoveSwitched', `the server now runs on ${nodes[1]}`],
          ['MoveSucceeded', `moved from ${nodes[0]} to ${nodes[1]}`],
        ]),
      );
      for (const event of events) {
        expect(event).toMatchObject({ reportingComponent: 'felis.dev/node-control', reportingInstance: 'felis-6f7d8-x2k4q', source: { component: 'felis-node-control', host: 'felis-6f7d8-x2k4q' }, count: 1 });
      }
    } finally {
      if (pod === undefined) delete process.env.POD_NAME;
      else process.env.POD_NAME = pod;
      await setup.cluster.close();
    }
  });

  it.each<MoveStage>(['archiving', 'creating', 'restoring', 'switching', 'releasing'])('a move killed after %s is retried to success, the world byte-identical', async (stage) => {
    const setup = await setUp();
    const seen: Array<{ claim: string; node?: string; op: string }> = [];
    let done = false;
    const playing = kubelet(setup, seen, () => done);
    try {
      const move = await beginMove(setup.deps, setup.user, setup.name, nodes[1]!, undefined, {
        checkpoint: (at) => {
          if (at === stage) throw new MoveInterrupted('killed');
        },
      });
      const killed = await settled(setup.deps, move.id);
      expect(killed).toMatchObject({ state: 'running', stage });
      if (!killed.switched) {
        const object = await setup.cluster.getServerObject(setup.name);
        expect(object.spec.worldClaim).toBeUndefined();
        expect(object.spec.nodeName).toBe(nodes[0]);
        expect(worldManifest(setup.source)).toEqual(setup.before);
      }
      setup.deps.clock.advance(LOCK_LEASE_MS + 1_000);
      await retryMove(setup.deps, setup.user, setup.name, move.id, undefined);
      expect(await settled(setup.deps, move.id)).toMatchObject({ state: 'succeeded', attempt: 1, switched: true });
      await expectMoved(setup, move.id);
    } finally {
      done = true;
      await playing;
      await setup.cluster.close();
    }
  });
});
