import { CoreV1Api, CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { nodeTasks } from '../../src/db/schema/nodes.js';
import { runNodeTask } from '../../src/features/nodes/runner.js';
import { createTestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { KubernetesCluster } from '../../src/adapters/cluster/kubernetes/adapter.js';
import { DEFAULT_CRD, SERVER_LABEL, toMinecraftServer } from '../../src/adapters/cluster/kubernetes/resource.js';
import { statefulSetFor } from '../../src/adapters/cluster/kubernetes/workloads.js';
import { ClusterForbiddenError, GAME_NODE_LABEL } from '../../src/adapters/cluster/nodes.js';
import { NodeCache } from '../../src/features/nodes/cache.js';
import { ManualClock } from '../../src/lib/clock.js';
import { applyManifest, realApiServer, useApiNamespace } from '../helpers/kube-api.js';

/** The same API server as another identity (the admin may impersonate): the shipped service account. */
function impersonating(admin: KubeConfig, user: string): KubeConfig {
  const kc = new KubeConfig();
  const cluster = admin.getCurrentCluster()!;
  const self = admin.getCurrentUser()!;
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ ...self, name: 'impersonated', impersonateUser: user }],
    contexts: [{ name: 'impersonated', cluster: cluster.name, user: 'impersonated' }],
    currentContext: 'impersonated',
  });
  return kc;
}

describe('a pinned server\'s workload', () => {
  it('selects its node by hostname, and an unpinned one any node', () => {
    const object = toMinecraftServer({ name: 'pinned', subdomain: 'pinned', labels: {} }, DEFAULT_CRD, 'felis');
    expect(statefulSetFor(object, DEFAULT_CRD).spec?.template.spec?.nodeSelector).toBeUndefined();
    object.spec.nodeName = 'worker-2';
    expect(statefulSetFor(object, DEFAULT_CRD).spec?.template.spec?.nodeSelector).toEqual({ 'kubernetes.io/hostname': 'worker-2' });
  });
});

const database = useTestDatabase();

describe.skipIf(!realApiServer())('nodes on a real API server', () => {
  const api = useApiNamespace('felis-nodes');

  it('records an Event on each server a node task touches (cordon, return, drain), aggregated, from this replica\'s pod', async () => {
    const { kubeConfig, namespace } = api();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const node = `tasks-${namespace}`;
    await core.createNode({ body: { metadata: { name: node } } });
    await applyManifest(kubeConfig, 'base/crd.yaml');
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } }).catch(() => undefined);
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const cluster = new KubernetesCluster({ kubeConfig, namespace, clock, watchBackoffMs: { initial: 20, max: 200 } });
    const deps = createTestDeps(database(), { overrides: { cluster, clock } });
    const pod = process.env.POD_NAME;
    process.env.POD_NAME = 'felis-6f7d8-x2k4q';
    try {
      await vi.waitFor(() => cluster.createServer({ name: 'busy', subdomain: 'busy', labels: {}, desiredState: 'Running' }), { timeout: 10_000, interval: 100 });
      await cluster.patchServerStatus('busy', { phase: 'Starting', ready: false });
      await core.createNamespacedPod({
        namespace,
        body: { metadata: { name: 'busy-0', labels: { [SERVER_LABEL]: 'busy' } }, spec: { nodeName: node, automountServiceAccountToken: false, containers: [{ name: 'server', image: 'x' }] } },
      });
      const events = async (reason: string): Promise<CoreV1Event[]> =>
        (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=busy,reason=${reason}` })).items;

      await cluster.nodes.setUnschedulable(node, true);
      await cluster.nodes.setUnschedulable(node, true);
      const [cordoned, ...more] = await events('NodeCordoned');
      expect(more).toEqual([]);
      expect(cordoned).toMatchObject({
        type: 'Normal',
        count: 2,
        message: `node ${node} is cordoned: pod busy-0 keeps running there, nothing new is placed there`,
        involvedObject: { kind: 'MinecraftServer', name: 'busy', namespace },
        reportingComponent: 'felis.dev/node-control',
        reportingInstance: 'felis-6f7d8-x2k4q',
        source: { component: 'felis-node-control', host: 'felis-6f7d8-x2k4q' },
      });
      await cluster.nodes.setUnschedulable(node, false);
      expect((await events('NodeReturned')).map((e) => e.message)).toEqual([`node ${node} takes new servers again (pod busy-0 runs there)`]);

      // A drain, as the node task runs it: cordon, stop each server there, wait for them to go.
      await deps.serverCache.ready();
      const id = 'drain-task';
      await deps.database.db.insert(nodeTasks).values({ id, action: 'drain', node, request: { action: 'drain', name: node }, actor: 'owner', state: 'running', stage: 'preflight', startedAt: clock.now() });
      const running = runNodeTask(deps, id);
      // The controller's and the kubelet's part: once asked to stop, the pod goes and the server is Stopped.
      const custom = kubeConfig.makeApiClient(CustomObjectsApi);
      await vi.waitFor(async () => {
        const object = (await custom.getNamespacedCustomObject({ ...DEFAULT_CRD, namespace, name: 'busy' })) as { spec: { desiredState: string } };
        expect(object.spec.desiredState).toBe('Stopped');
      }, { timeout: 10_000 });
      await core.deleteNamespacedPod({ name: 'busy-0', namespace, gracePeriodSeconds: 0 });
      await cluster.patchServerStatus('busy', { phase: 'Stopped' });
      await running;
      const [task] = await deps.database.db.select().from(nodeTasks).where(eq(nodeTasks.id, id));
      expect(task).toMatchObject({ state: 'succeeded' });
      expect((await events('NodeDrained')).map((e) => [e.message, e.reportingInstance])).toEqual([[`stopped cleanly: node ${node} is being drained`, 'felis-6f7d8-x2k4q']]);
      // The drain's cordon is the same Event again (the pod was still there): its count went up.
      expect((await events('NodeCordoned')).map((e) => e.count)).toEqual([3]);
    } finally {
      if (pod === undefined) delete process.env.POD_NAME;
      else process.env.POD_NAME = pod;
      deps.serverCache.close();
      await cluster.close();
      await core.deleteNode({ name: node }).catch(() => undefined);
    }
  });

  it('lists, watches, labels and cordons nodes (the test plays the kubelet), and places a server on one', async () => {
    const { kubeConfig, namespace } = api();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const name = `node-${namespace}`;
    await core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/arch': 'amd64' } } } });
    // The kubelet's report: Ready, with its capacity.
    await core.replaceNodeStatus({
      name,
      body: {
        metadata: { name, resourceVersion: (await core.readNode({ name })).metadata?.resourceVersion },
        status: {
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date(), lastTransitionTime: new Date() }],
          capacity: { cpu: '4', memory: '16Gi', pods: '110' },
          allocatable: { cpu: '3800m', memory: '15Gi', pods: '110' },
        },
      },
    });
    const cluster = new KubernetesCluster({ kubeConfig, namespace, clock: new ManualClock('2026-06-01T12:00:00.000Z') });
    const nodes = cluster.nodes;
    const cache = new NodeCache(nodes);
    try {
      await cache.ready();
      expect(cache.get(name)).toMatchObject({ ready: true, approved: false, unschedulable: false, capacity: { cpu: '4', memory: '16Gi' }, allocatable: { cpu: '3800m' } });
      expect(await nodes.canWriteNodes()).toBe(true);

      await nodes.setGameNode(name, true);
      await nodes.setUnschedulable(name, true);
      await vi.waitFor(() => expect(cache.get(name)).toMatchObject({ approved: true, unschedulable: true }), { timeout: 5_000 });
      expect((await core.readNode({ name })).metadata?.labels?.[GAME_NODE_LABEL]).toBe('true');
      await nodes.setUnschedulable(name, false);
      await nodes.setGameNode(name, false);
      await vi.waitFor(() => expect(cache.get(name)).toMatchObject({ approved: false, unschedulable: false }), { timeout: 5_000 });
      expect((await core.readNode({ name })).spec?.unschedulable).toBeUndefined();

      // A pod on the node (the scheduler's binding) counts its server as running there.
      await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } }).catch(() => undefined);
      await core.createNamespacedPod({
        namespace,
        body: { metadata: { name: 'survival-0', labels: { [SERVER_LABEL]: 'survival' } }, spec: { nodeName: name, automountServiceAccountToken: false, containers: [{ name: 'server', image: 'x' }] } },
      });
      expect(await nodes.serversRunningOn(name)).toEqual(['survival']);
      expect(await nodes.serversRunningOn('another-node')).toEqual([]);

      await applyManifest(kubeConfig, 'base/crd.yaml');
      let created;
      for (let tries = 0; !created; tries++) {
        try {
          created = await cluster.createServer({ name: 'survival', subdomain: 'survival', labels: {} });
        } catch (err) {
          if (tries >= 50) throw err;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      expect((await nodes.placeServer('survival', name)).spec.node).toBe(name);
      expect((await nodes.placeServer('survival', undefined)).spec.node).toBeUndefined();
    } finally {
      cache.close();
      await cluster.close();
      await core.deleteNode({ name }).catch(() => undefined);
    }
  });

  it('under the shipped RBAC (nodes read, never written) node control is unavailable and a write is refused as forbidden', async () => {
    const { kubeConfig, namespace } = api();
    // The ClusterRoleBinding names the service account felis/felis, whatever the namespace.
    await applyManifest(kubeConfig, 'base/rbac.yaml', namespace);
    const asService = impersonating(kubeConfig, 'system:serviceaccount:felis:felis');
    const cluster = new KubernetesCluster({ kubeConfig: asService, namespace });
    try {
      expect(await cluster.nodes.canWriteNodes()).toBe(false);
      const { nodes } = await cluster.nodes.listNodes();
      expect(Array.isArray(nodes)).toBe(true);
      await expect(cluster.nodes.setUnschedulable('any-node', true)).rejects.toBeInstanceOf(ClusterForbiddenError);
      // The opt-in grant makes node control available.
      await applyManifest(kubeConfig, 'node-control/rbac.yaml');
      await vi.waitFor(async () => expect(await cluster.nodes.canWriteNodes()).toBe(true), { timeout: 5_000 });
    } finally {
      await kubeConfig.makeApiClient(RbacAuthorizationV1Api).deleteClusterRoleBinding({ name: 'felis-node-control' }).catch(() => undefined);
      await cluster.close();
    }
  });
});
