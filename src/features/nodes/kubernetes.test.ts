import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { KubeStandIn } from '../../../test/helpers/kube-stand-in.js';
import { useTempDir, worldManifest } from '../../../test/helpers/worlds.js';
import { LocalBackupStore } from '../../adapters/backup-store/local.js';
import { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { kubeConfigFor } from '../../adapters/cluster/kubernetes/kubeconfig.js';
import { DEFAULT_CRD, type MinecraftServer } from '../../adapters/cluster/kubernetes/resource.js';
import { statefulSetFor } from '../../adapters/cluster/kubernetes/workloads.js';
import { KubernetesWorldJobRunner, worldJobName } from '../../adapters/cluster/kubernetes/world-jobs.js';
import { SELECTED_NODE_ANNOTATION } from '../../adapters/cluster/kubernetes/world-volumes.js';
import { GAME_NODE_LABEL } from '../../adapters/cluster/nodes.js';
import { moveClaimName } from '../../adapters/cluster/world-volumes.js';
import { main as worldJobCli } from '../../cli/world-job.js';
import { serverMoves } from '../../db/schema/nodes.js';
import type { SessionContext } from '../../http/session.js';
import { JobTracker } from '../worlds/volumes/runtime.js';
import { LOCK_LEASE_MS } from '../worlds/jobs/lock.js';
import { beginMove, MoveInterrupted, retryMove, type MoveStage } from './moves.js';

const NS = 'felis';

type PodSpec = { nodeSelector?: Record<string, string>; volumes?: Array<{ name: string; persistentVolumeClaim?: { claimName: string } }>; containers: Array<{ args: string[] }> };

describe('moving a world between node-local volumes on Kubernetes (API stand-in; the test plays the kubelet)', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir('felis-kube-moves-');
  let standIn: KubeStandIn;

  beforeAll(async () => {
    standIn = await KubeStandIn.start();
    standIn.defineCustomResource(DEFAULT_CRD.group, DEFAULT_CRD.version, DEFAULT_CRD.plural, 'MinecraftServer');
    for (const name of ['node-a', 'node-b']) {
      standIn.put('nodes', {
        metadata: { name, labels: { [GAME_NODE_LABEL]: 'true', 'kubernetes.io/hostname': name } },
        spec: {},
        status: { conditions: [{ type: 'Ready', status: 'True' }], capacity: { cpu: '4', memory: '16Gi' }, allocatable: { cpu: '4', memory: '16Gi' } },
      });
    }
  });
  afterAll(async () => {
    await standIn.close();
  });

  async function setUp() {
    const root = tempDir();
    const deps0 = createTestDeps(database());
    const cluster = new KubernetesCluster({ kubeConfig: kubeConfigFor(standIn.url), namespace: NS, clock: deps0.clock });
    const store = new LocalBackupStore(join(root, 'backups'));
    const deps = createTestDeps(database(), { overrides: { cluster, clock: deps0.clock, worlds: { store, jobs: new JobTracker() } } });
    deps.worlds.runner = new KubernetesWorldJobRunner({ client: cluster, namespace: NS, image: 'felis:test', storeSecret: 'store', deadlineSeconds: 600, log: deps.log, pollMs: 5 });
    const name = `mv-${Math.random().toString(36).slice(2, 8)}`;
    await cluster.createServer({ name, subdomain: name, labels: {}, desiredState: 'Stopped', node: 'node-a', storage: '5Gi' });
    await cluster.nodes!.placeServer(name, 'node-a');
    await deps.serverCache.ready();
    await vi.waitFor(() => expect(deps.serverCache.get(name)?.resource.spec.node).toBe('node-a'));
    // What the controller and the StatefulSet controller made before the move: the set and its claim.
    const object = standIn.get(DEFAULT_CRD.plural, NS, name, DEFAULT_CRD.group) as unknown as MinecraftServer;
    standIn.put('statefulsets', statefulSetFor(object, cluster.crd) as never);
    standIn.put('persistentvolumeclaims', { metadata: { name: `world-${name}-0`, namespace: NS }, spec: {} });
    // The volumes, as the kubelet mounts them: a folder per claim.
    const volumes = join(root, 'claims');
    const source = join(volumes, `world-${name}-0`);
    mkdirSync(join(source, 'world', 'region'), { recursive: true });
    writeFileSync(join(source, 'server.properties'), `motd=${name}\n`);
    writeFileSync(join(source, 'world', 'region', 'r.0.0.mca'), Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 31) & 0xff)));
    const user = { userId: 'staff', role: 'admin', tokenHash: 'x', inSetup: false } as SessionContext;
    return { deps, cluster, name, root, volumes, source, before: worldManifest(source), user };
  }

  /**
   * The kubelet and the Job controller: the world Job's pod runs the real CLI on the folder of the
   * claim it mounts, on the node it is pinned to; the Job ends with the pod's termination message.
   */
  async function kubelet(setup: { name: string; root: string; volumes: string }, seen: Array<{ claim: string; node?: string; op: string }>, stop: () => boolean) {
    while (!stop()) {
      const job = standIn.get('jobs', NS, worldJobName(setup.name));
      if (!job || (job.status as { conditions?: unknown[] } | undefined)?.conditions) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      const pod = (job.spec as { template: { spec: PodSpec } }).template.spec;
      const claim = pod.volumes!.find((v) => v.name === 'world')!.persistentVolumeClaim!.claimName;
      const node = pod.nodeSelector?.['kubernetes.io/hostname'];
      seen.push({ claim, ...(node ? { node } : {}), op: pod.containers[0]!.args[0]! });
      const folder = join(setup.volumes, claim);
      mkdirSync(folder, { recursive: true });
      const log = join(setup.root, `termination-${Math.random()}`);
      const write = process.stdout.write;
      process.stdout.write = (() => true) as typeof process.stdout.write;
      let code: number;
      try {
        code = await worldJobCli(pod.containers[0]!.args.map((a) => (a === '/data' ? folder : a)), { WORLD_JOB_LOCAL_STORE: join(setup.root, 'backups'), TERMINATION_LOG: log });
      } finally {
        process.stdout.write = write;
      }
      standIn.endJob(NS, worldJobName(setup.name), { succeeded: code === 0, message: readFileSync(log, 'utf8') });
    }
  }

  async function settled(deps: TestDeps, id: string) {
    await deps.worlds.jobs.idle();
    const [row] = await deps.database.db.select().from(serverMoves).where(eq(serverMoves.id, id));
    return row!;
  }

  async function expectMoved(setup: Awaited<ReturnType<typeof setUp>>, id: string) {
    const claim = moveClaimName(setup.name, id);
    const object = standIn.get(DEFAULT_CRD.plural, NS, setup.name, DEFAULT_CRD.group) as unknown as MinecraftServer;
    expect(object.spec).toMatchObject({ nodeName: 'node-b', worldClaim: claim });
    // The new claim, bound on the target node, as big as the server's spec asks.
    const made = standIn.get('persistentvolumeclaims', NS, claim)!;
    expect(made.metadata.annotations).toMatchObject({ [SELECTED_NODE_ANNOTATION]: 'node-b' });
    expect(made.spec).toMatchObject({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } });
    // The old claim is released, and the set made from its template deleted: the controller makes
    // it again from the spec, on the new claim and pinned to the target.
    expect(standIn.get('persistentvolumeclaims', NS, `world-${setup.name}-0`)).toBeUndefined();
    expect(standIn.get('statefulsets', NS, setup.name)).toBeUndefined();
    const again = statefulSetFor(object, DEFAULT_CRD);
    expect(again.spec?.volumeClaimTemplates).toBeUndefined();
    expect(again.spec?.template.spec?.volumes).toEqual([{ name: 'world', persistentVolumeClaim: { claimName: claim } }]);
    expect(again.spec?.template.spec?.nodeSelector).toEqual({ 'kubernetes.io/hostname': 'node-b' });
    expect(worldManifest(join(setup.volumes, claim))).toEqual(setup.before);
    // A backup after the move runs on the moved world's claim, on its node.
    expect(await setup.cluster.volumeOf(setup.name)).toEqual({ claim, node: 'node-b' });
  }

  it('archives on the source claim, restores into a claim made on the target node (Jobs pinned there), switches the StatefulSet to it and releases the old one', async () => {
    const setup = await setUp();
    const seen: Array<{ claim: string; node?: string; op: string }> = [];
    let done = false;
    const playing = kubelet(setup, seen, () => done);
    try {
      const move = await beginMove(setup.deps, setup.user, setup.name, 'node-b', undefined);
      expect(move).toMatchObject({ state: 'running', sourceNode: 'node-a', targetNode: 'node-b' });
      expect(await settled(setup.deps, move.id)).toMatchObject({ state: 'succeeded', stage: 'succeeded', switched: true });
      expect(seen).toEqual([
        { claim: `world-${setup.name}-0`, node: 'node-a', op: 'backup' },
        { claim: moveClaimName(setup.name, move.id), node: 'node-b', op: 'restore' },
      ]);
      await expectMoved(setup, move.id);
    } finally {
      done = true;
      await playing;
    }
  });

  it.each<MoveStage>(['archiving', 'creating', 'restoring', 'switching', 'releasing'])('a move killed after %s is retried to success, the world byte-identical', async (stage) => {
    const setup = await setUp();
    const seen: Array<{ claim: string; node?: string; op: string }> = [];
    let done = false;
    const playing = kubelet(setup, seen, () => done);
    try {
      const move = await beginMove(setup.deps, setup.user, setup.name, 'node-b', undefined, {
        checkpoint: (at) => {
          if (at === stage) throw new MoveInterrupted('killed');
        },
      });
      const killed = await settled(setup.deps, move.id);
      expect(killed).toMatchObject({ state: 'running', stage });
      if (!killed.switched) {
        const object = standIn.get(DEFAULT_CRD.plural, NS, setup.name, DEFAULT_CRD.group) as unknown as MinecraftServer;
        expect(object.spec.worldClaim).toBeUndefined();
        expect(object.spec.nodeName).toBe('node-a');
        expect(worldManifest(setup.source)).toEqual(setup.before);
      }
      setup.deps.clock.advance(LOCK_LEASE_MS + 1_000);
      await retryMove(setup.deps, setup.user, setup.name, move.id, undefined);
      expect(await settled(setup.deps, move.id)).toMatchObject({ state: 'succeeded', attempt: 1, switched: true });
      await expectMoved(setup, move.id);
    } finally {
      done = true;
      await playing;
    }
  });
});
