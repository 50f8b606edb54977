import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
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

describe.skipIf(!realApiServer())('nodes on a real API server', () => {
  const api = useApiNamespace('felis-nodes');

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
