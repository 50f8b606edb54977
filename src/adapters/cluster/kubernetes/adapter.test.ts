import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { envtestAvailable } from '../../../../test/helpers/envtest.js';
import { FakeKubelet } from '../../../../test/helpers/fake-kubelet.js';
import { applyManifest, PlayedCluster, useOwnApiServer } from '../../../../test/helpers/kube-api.js';
import { ServerCache } from '../../../features/servers/core/cache.js';
import { ClusterConflictError, ClusterNoPodError, ClusterNotFoundError, FORWARDING_LABEL, SYSTEM_LABEL, type PodLogLine } from '../types.js';
import { FIELD_MANAGER, KubernetesCluster, podName } from './adapter.js';
import { DEFAULT_CRD, type MinecraftServer } from './resource.js';
import { serviceFor, statefulSetFor } from './workloads.js';

const NS = 'felis';
const spec = (name: string, extra: object = {}) => ({ name, subdomain: `${name}-sub`, labels: {}, image: 'reg/mc@sha256:' + 'a'.repeat(64), memory: '2Gi', ...extra });
const crParams = (name: string) => ({ ...DEFAULT_CRD, namespace: NS, name });
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

/**
 * The adapter against a real kube-apiserver and etcd of this file's own: its watch cache is off, so
 * a watch is served by etcd and a resumed one meets etcd's compaction (410 Gone) as it would after
 * a cluster's periodic compaction; the adapter's connections go through a relay the test can cut.
 * There is no kubelet: a pod's log comes from a FakeKubelet behind a Node, through the real API
 * server's log proxy. The one fault no real server can be made to show on cue (an injected 409) is
 * in adapter.stand-in.test.ts.
 */
describe.skipIf(!envtestAvailable())('Kubernetes adapter against a real API server', () => {
  const server = useOwnApiServer({ apiserverArgs: ['--watch-cache=false'] });
  let admin: KubeConfig;
  let cluster: KubernetesCluster;
  let played: PlayedCluster;
  let custom: CustomObjectsApi;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  const stored = async (name: string) => (await custom.getNamespacedCustomObject(crParams(name))) as MinecraftServer;

  beforeAll(async () => {
    const { admin: kubeConfig, relayed } = server();
    admin = kubeConfig;
    custom = admin.makeApiClient(CustomObjectsApi);
    core = admin.makeApiClient(CoreV1Api);
    apps = admin.makeApiClient(AppsV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await applyManifest(admin, 'base/crd.yaml');
    played = new PlayedCluster(admin, NS);
    await played.prepareNamespace();
    cluster = new KubernetesCluster({
      kubeConfig: relayed,
      namespace: NS,
      watchBackoffMs: { initial: 20, max: 200 },
      rconAddress: () => ({ host: '127.0.0.1', port: 1 }),
    });
    // A new CRD is served a moment after it is created.
    await vi.waitFor(() => cluster.listServers(), { timeout: 20_000, interval: 100 });
    return () => cluster.close();
  });

  it('creates a MinecraftServer with its RCON Secret, and refuses a second of the same name', async () => {
    const created = await cluster.createServer(spec('alpha', { displayName: 'Alpha', autostartPolicy: 'public' }));
    expect(created.spec).toMatchObject({ name: 'alpha', subdomain: 'alpha-sub', displayName: 'Alpha', desiredState: 'Stopped', autostartPolicy: 'public' });
    expect(created.status).toMatchObject({ phase: 'Stopped', ready: false, idleStopSeconds: 900 });
    const object = await stored('alpha');
    expect(object).toMatchObject({ apiVersion: 'felis.dev/v1alpha1', kind: 'MinecraftServer', spec: { rconSecretRef: { name: 'alpha-rcon', key: 'password' } } });
    const secret = await core.readNamespacedSecret({ name: 'alpha-rcon', namespace: NS });
    expect(secret.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'MinecraftServer', name: 'alpha', uid: object.metadata.uid })]);
    // The API server stored stringData as data (base64).
    expect(Buffer.from(secret.data!.password!, 'base64').toString('utf8')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    await expect(cluster.createServer(spec('alpha'))).rejects.toBeInstanceOf(ClusterConflictError);
  });

  it('reads the RCON endpoint and password from the Secret, once a pod runs', async () => {
    const secret = await core.readNamespacedSecret({ name: 'alpha-rcon', namespace: NS });
    await core.replaceNamespacedSecret({ name: 'alpha-rcon', namespace: NS, body: { ...secret, data: { password: Buffer.from('s3cret').toString('base64') } } });
    await expect(cluster.rconEndpoint('alpha')).rejects.toBeInstanceOf(ClusterNoPodError);
    await core.createNamespacedPod({ namespace: NS, body: { metadata: { name: podName('alpha') }, spec: { automountServiceAccountToken: false, containers: [{ name: 'server', image: 'x' }] } } });
    await played.setPodReady(podName('alpha'), true);
    await expect(cluster.rconEndpoint('alpha')).resolves.toEqual({ host: '127.0.0.1', port: 1, password: 's3cret' });
    await expect(cluster.rconEndpoint('nobody')).rejects.toBeInstanceOf(ClusterNotFoundError);
    await core.deleteNamespacedPod({ name: podName('alpha'), namespace: NS });
  });

  it('changes only the fields a spec patch names, loses none to a concurrent writer, and deletes a server', async () => {
    await cluster.createServer(spec('edited', { displayName: 'Before', cpu: '2', cpuRequest: '1' }));
    const updated = await cluster.updateServer('edited', { displayName: 'After', cpu: '3' });
    expect(updated.spec).toMatchObject({ displayName: 'After', memory: '2Gi' });
    expect((await stored('edited')).spec).toMatchObject({ displayName: 'After', resources: { cpu: '3', cpuRequest: '1' } });
    // An operator's label and the service's patches at once: the merge patches carry no version, so none is refused.
    await Promise.all([
      custom.patchNamespacedCustomObject({ ...crParams('edited'), body: { metadata: { labels: { team: 'ops' } } } }, mergePatch),
      cluster.setDesiredState('edited', 'Running'),
      cluster.patchServerStatus('edited', { phase: 'Starting' }),
    ]);
    expect(await stored('edited')).toMatchObject({ metadata: { labels: { team: 'ops' } }, spec: { desiredState: 'Running' }, status: { phase: 'Starting' } });
    // A replace from a stale read is what the API server refuses (409); the adapter never sends one.
    const stale = await stored('edited');
    await cluster.updateServer('edited', { displayName: 'moved on' });
    await expect(custom.replaceNamespacedCustomObject({ ...crParams('edited'), body: stale })).rejects.toMatchObject({ code: 409 });

    await cluster.removeServer('edited');
    await expect(stored('edited')).rejects.toMatchObject({ code: 404 });
    await expect(cluster.removeServer('edited')).rejects.toBeInstanceOf(ClusterNotFoundError);
    await expect(cluster.updateServer('edited', { displayName: 'x' })).rejects.toBeInstanceOf(ClusterNotFoundError);
    await expect(cluster.setDesiredState('ghost', 'Running')).rejects.toBeInstanceOf(ClusterNotFoundError);
  });

  it('feeds the server cache by list and watch, and loses no update when the connection drops mid-watch', async () => {
    const { proxy } = server();
    const cache = new ServerCache(cluster, 'play.example');
    await cache.ready();
    expect(cache.get('alpha')?.resource.spec.name).toBe('alpha');
    await cluster.createServer(spec('beta'));
    await vi.waitFor(() => expect(cache.get('beta')).toBeDefined());

    // The connection drops and stays down while another writer changes beta: the watch, resumed
    // from the last version it saw, replays what it missed.
    proxy.blackHole();
    expect(proxy.cut()).toBeGreaterThan(0);
    await custom.patchNamespacedCustomObject({ ...crParams('beta'), body: { metadata: { labels: { [FORWARDING_LABEL]: 'legacy' } } } }, mergePatch);
    await custom.patchNamespacedCustomObjectStatus({ ...crParams('beta'), body: { status: { phase: 'Running', ready: true, players: { online: 3, max: 20 } } } }, mergePatch);
    proxy.restore();
    await vi.waitFor(() => expect(cache.get('beta')?.resource.status).toMatchObject({ phase: 'Running', playersOnline: 3 }), { timeout: 10_000 });
    expect(cache.get('beta')?.resource.spec.labels[FORWARDING_LABEL]).toBe('legacy');
    expect(cache.byHost('beta-sub.play.example')?.resource.spec.name).toBe('beta');

    await custom.deleteNamespacedCustomObject(crParams('beta'));
    await vi.waitFor(() => expect(cache.get('beta')).toBeUndefined());
    cache.close();
  });

  it('ends a watch resumed after etcd compacted its version with 410 Gone, and the cache lists again', async () => {
    const { proxy, compact } = server();
    // The watch itself: a version older than the compaction is refused.
    const { resourceVersion } = await cluster.listServers();
    await cluster.createServer(spec('delta'));
    const compactedAt = await compact();
    expect(compactedAt).toBeGreaterThan(Number(resourceVersion));
    const expired: Error[] = [];
    const old = cluster.watchServers(resourceVersion, () => undefined, (err) => expired.push(err));
    await vi.waitFor(() => expect(expired).toHaveLength(1), { timeout: 10_000 });
    old.stop();
    expect(expired[0]!.name).toBe('WatchExpiredError');

    // The cache: its watch drops, a server is created and etcd compacts while it is away; the
    // resumed watch meets 410 and the cache lists again, so it still sees the new server.
    const cache = new ServerCache(cluster, undefined);
    await cache.ready();
    const lists = vi.spyOn(cluster, 'listServers');
    proxy.blackHole();
    proxy.cut();
    await custom.createNamespacedCustomObject({ ...DEFAULT_CRD, namespace: NS, body: { apiVersion: 'felis.dev/v1alpha1', kind: 'MinecraftServer', metadata: { name: 'gamma' }, spec: { subdomain: 'gamma' } } });
    await compact();
    proxy.restore();
    await vi.waitFor(() => expect(cache.get('gamma')).toBeDefined(), { timeout: 10_000 });
    expect(lists).toHaveBeenCalled();
    lists.mockRestore();
    cache.close();
  });

  it('counts servers holding a node slot against the ready, schedulable nodes', async () => {
    const node = async (name: string, ready: boolean, extra: object = {}) => {
      await core.createNode({ body: { metadata: { name }, ...extra } });
      const created = await core.readNode({ name });
      await core.replaceNodeStatus({ name, body: { ...created, status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } } });
    };
    await node('n1', true, { metadata: { name: 'n1', labels: { 'felis.dev/game': 'true' } } });
    await node('n2', true, { spec: { unschedulable: true } });
    await node('n3', false);
    await cluster.createServer(spec('login', { labels: { [SYSTEM_LABEL]: 'true' }, desiredState: 'Running' }));
    await cluster.setDesiredState('alpha', 'Running');
    // alpha wants Running; delta and gamma are Stopped; the system server never counts.
    expect(await cluster.capacity()).toEqual({ running: 1, nodes: 1 });
  });

  it('writes the workloads by server-side apply as its one field manager, forcing back what it owns and leaving what others own', async () => {
    const alpha = await stored('alpha');
    await cluster.applyStatefulSet(statefulSetFor(alpha, DEFAULT_CRD, 0));
    await cluster.applyService(serviceFor(alpha, DEFAULT_CRD));
    const managers = (object: { metadata?: object }) =>
      (((object.metadata as { managedFields?: Array<{ manager?: string; operation?: string }> }).managedFields ?? []).map((f) => `${f.manager}/${f.operation}`)).sort();
    expect(managers(await apps.readNamespacedStatefulSet({ name: 'alpha', namespace: NS }))).toEqual([`${FIELD_MANAGER}/Apply`]);
    expect(managers(await core.readNamespacedService({ name: 'alpha', namespace: NS }))).toEqual([`${FIELD_MANAGER}/Apply`]);
    // The server and its Secret were created and patched under the same name.
    expect(managers(await stored('alpha'))).toEqual([`${FIELD_MANAGER}/Update`]);
    expect(managers(await core.readNamespacedSecret({ name: 'alpha-rcon', namespace: NS }))).toContain(`${FIELD_MANAGER}/Update`);

    // An operator annotates the set and the pod template (its own apply), and scales it by hand.
    await apps.patchNamespacedStatefulSet(
      {
        name: 'alpha',
        namespace: NS,
        fieldManager: 'ops',
        body: {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: 'alpha', annotations: { 'ops.example/owner': 'team-a' } },
          spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-06-01T12:00:00Z' } } } },
        },
      },
      apply,
    );
    await apps.patchNamespacedStatefulSet({ name: 'alpha', namespace: NS, fieldManager: 'kubectl', body: { spec: { replicas: 3 } } }, mergePatch);
    // Without force the service's apply would be refused over replicas (409, a conflict with kubectl's write).
    await expect(
      apps.patchNamespacedStatefulSet({ name: 'alpha', namespace: NS, fieldManager: FIELD_MANAGER, body: statefulSetFor(alpha, DEFAULT_CRD, 1) }, apply),
    ).rejects.toMatchObject({ code: 409 });

    // The service scales (forced): replicas is its own again; the operator's annotations stay.
    await cluster.scaleStatefulSet('alpha', 1);
    let set = await apps.readNamespacedStatefulSet({ name: 'alpha', namespace: NS });
    expect(set.spec?.replicas).toBe(1);
    expect(set.metadata?.annotations).toMatchObject({ 'ops.example/owner': 'team-a' });
    expect(set.spec?.template.metadata?.annotations).toEqual({ 'kubectl.kubernetes.io/restartedAt': '2026-06-01T12:00:00Z' });
    // kubectl's hand-set replicas was its only field: taken back, its entry is gone.
    expect(managers(set)).toEqual([`${FIELD_MANAGER}/Apply`, 'ops/Apply']);

    // A changed spec rolled in: a limit it no longer names is gone, the operator's fields are not.
    await cluster.updateServer('alpha', { memory: '3Gi', cpu: '2' });
    await cluster.applyStatefulSet(statefulSetFor(await stored('alpha'), DEFAULT_CRD, 0));
    await cluster.updateServer('alpha', { memory: '4Gi' });
    await custom.patchNamespacedCustomObject({ ...crParams('alpha'), body: { spec: { resources: { cpu: null } } } }, mergePatch);
    await cluster.applyStatefulSet(statefulSetFor(await stored('alpha'), DEFAULT_CRD, 0));
    set = await apps.readNamespacedStatefulSet({ name: 'alpha', namespace: NS });
    expect(set.spec?.template.spec?.containers[0]?.resources?.limits).toEqual({ memory: '4Gi' });
    expect(set.metadata?.annotations).toMatchObject({ 'ops.example/owner': 'team-a' });
    expect(set.spec?.template.metadata?.annotations).toEqual({ 'kubectl.kubernetes.io/restartedAt': '2026-06-01T12:00:00Z' });

    // The Service: an operator's label stays through the service's next apply.
    await core.patchNamespacedService({ name: 'alpha', namespace: NS, fieldManager: 'ops', body: { metadata: { labels: { 'ops.example/tier': 'gold' } } } }, mergePatch);
    await cluster.applyService(serviceFor(await stored('alpha'), DEFAULT_CRD));
    expect((await core.readNamespacedService({ name: 'alpha', namespace: NS })).metadata?.labels).toMatchObject({ 'ops.example/tier': 'gold', 'felis.dev/server': 'alpha' });
  });

  it('recreates the pod of a server with a fresh restart budget', async () => {
    await cluster.scaleStatefulSet('alpha', 1);
    await played.syncStatefulSets();
    const before = await core.readNamespacedPod({ name: podName('alpha'), namespace: NS });
    await cluster.patchServerStatus('alpha', { phase: 'Failed', startGaveUp: true, autoRestarts: 3 });
    const after = await cluster.recreatePod('alpha');
    expect(after.status).toMatchObject({ phase: 'Starting', autoRestarts: 0, startGaveUp: false });
    await played.syncStatefulSets();
    // The StatefulSet brings the pod back as a new object.
    expect((await core.readNamespacedPod({ name: podName('alpha'), namespace: NS })).metadata?.uid).not.toBe(before.metadata?.uid);
  });

  it('stops a server in an emergency: the stop recorded first, the workload scaled to none, the pod deleted without grace', async () => {
    await cluster.createServer(spec('eta', { desiredState: 'Running' }));
    await cluster.applyStatefulSet(statefulSetFor(await stored('eta'), DEFAULT_CRD, 1));
    await played.syncStatefulSets();
    await played.setPodReady(podName('eta'), true);
    const stopped = await cluster.emergencyStop('eta');
    expect(stopped.spec.desiredState).toBe('Stopped');
    expect((await stored('eta')).spec).toMatchObject({ desiredState: 'Stopped' });
    const set = await apps.readNamespacedStatefulSet({ name: 'eta', namespace: NS });
    expect(set.spec?.replicas).toBe(0);
    await expect(core.readNamespacedPod({ name: podName('eta'), namespace: NS })).rejects.toMatchObject({ code: 404 });
    // The intent was written before the workload was touched (etcd's revisions order the writes).
    expect(Number(stopped.resourceVersion)).toBeLessThan(Number(set.metadata?.resourceVersion));
    await expect(cluster.emergencyStop('nobody')).rejects.toBeInstanceOf(ClusterNotFoundError);
  });

  it('runs Jobs: create, get, watch to completion, delete', async () => {
    const batch = admin.makeApiClient(BatchV1Api);
    const events: Array<[string, string | undefined]> = [];
    const watch = cluster.watchJobs('felis.dev/job=backup', (type, job) => events.push([type, job.status?.succeeded ? 'succeeded' : undefined]));
    await cluster.createJob({
      metadata: { name: 'backup-alpha-1', labels: { 'felis.dev/job': 'backup' } },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'backup', image: 'busybox' }] } } },
    });
    expect((await cluster.getJob('backup-alpha-1'))?.metadata?.name).toBe('backup-alpha-1');
    // The Job controller's part: the Job succeeded.
    const job = await batch.readNamespacedJob({ name: 'backup-alpha-1', namespace: NS });
    await batch.replaceNamespacedJobStatus({ name: 'backup-alpha-1', namespace: NS, body: { ...job, status: { succeeded: 1 } } });
    await vi.waitFor(() => expect(events).toContainEqual(['MODIFIED', 'succeeded']), { timeout: 10_000 });
    await cluster.deleteJob('backup-alpha-1');
    await cluster.deleteJob('backup-alpha-1'); // already gone: no error
    await vi.waitFor(async () => expect(await cluster.getJob('backup-alpha-1')).toBeUndefined(), { timeout: 10_000 });
    await vi.waitFor(() => expect(events.at(-1)?.[0]).toBe('DELETED'), { timeout: 10_000 });
    watch.stop();
  });

  it('streams a pod log through the API server from the node\'s kubelet: stamped lines, sinceTime, tailLines, following', async () => {
    const kubelet = await FakeKubelet.start();
    try {
      await kubelet.registerNode(admin, 'kubelet-node');
      const pod = podName('theta');
      await core.createNamespacedPod({
        namespace: NS,
        body: { metadata: { name: pod }, spec: { nodeName: 'kubelet-node', automountServiceAccountToken: false, containers: [{ name: 'server', image: 'x' }] } },
      });
      const signal = new AbortController().signal;
      const collect = async (lines: AsyncIterable<PodLogLine>) => {
        const out: PodLogLine[] = [];
        for await (const line of lines) out.push(line);
        return out;
      };
      kubelet.setState(NS, pod, 'server', 'waiting');
      await expect(collect(cluster.podLogs('theta', { follow: false, signal }))).rejects.toBeInstanceOf(ClusterNoPodError); // ContainerCreating: 400
      await expect(collect(cluster.podLogs('nobody', { follow: false, signal }))).rejects.toBeInstanceOf(ClusterNoPodError); // 404
      kubelet.setState(NS, pod, 'server', 'running');
      kubelet.appendLog(NS, pod, 'server', 'Starting minecraft server', new Date('2026-01-01T00:00:00.100Z'));
      kubelet.appendLog(NS, pod, 'server', 'Done (3.2s)! For help, type "help"', new Date('2026-01-01T00:00:01.250Z'));
      const abort = new AbortController();
      const seen: PodLogLine[] = [];
      const reading = (async () => {
        for await (const line of cluster.podLogs('theta', { follow: true, sinceTime: new Date('2026-01-01T00:00:01.900Z'), signal: abort.signal })) {
          seen.push(line);
          if (seen.length === 2) abort.abort();
        }
      })();
      await vi.waitFor(() => expect(seen).toHaveLength(1), { timeout: 10_000 });
      expect(await collect(cluster.podLogs('theta', { follow: false, signal, tailLines: 1 }))).toEqual([seen[0]]);
      kubelet.appendLog(NS, pod, 'server', '<Steve> hello', new Date('2026-01-01T00:00:02.000Z'));
      await reading;
      expect(seen).toEqual([
        { time: new Date('2026-01-01T00:00:01.250Z'), line: 'Done (3.2s)! For help, type "help"' },
        { time: new Date('2026-01-01T00:00:02.000Z'), line: '<Steve> hello' },
      ]);
      // A lone carriage return (a progress bar) stays inside its stamped line, through the API server too.
      kubelet.appendLog(NS, pod, 'server', 'Preparing spawn area: 40%\rPreparing spawn area: 80%', new Date('2026-01-01T00:00:03.000Z'));
      expect(await collect(cluster.podLogs('theta', { follow: false, signal, tailLines: 1 }))).toEqual([
        { time: new Date('2026-01-01T00:00:03.000Z'), line: 'Preparing spawn area: 40%\rPreparing spawn area: 80%' },
      ]);
    } finally {
      await kubelet.close();
    }
  });

  it('gives up on a pod log whose kubelet never answers by the service\'s own deadline, as a 503 fault', async () => {
    // A node whose kubelet accepts the connection and says nothing.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const node = 'silent-node';
      await core.createNode({ body: { metadata: { name: node } } });
      const created = await core.readNode({ name: node });
      await core.replaceNodeStatus({
        name: node,
        body: {
          ...created,
          status: {
            conditions: [{ type: 'Ready', status: 'True' }],
            addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
            daemonEndpoints: { kubeletEndpoint: { Port: (silent.address() as AddressInfo).port } },
          },
        },
      });
      const pod = podName('iota');
      await core.createNamespacedPod({
        namespace: NS,
        body: { metadata: { name: pod }, spec: { nodeName: node, automountServiceAccountToken: false, containers: [{ name: 'server', image: 'x' }] } },
      });
      const impatient = new KubernetesCluster({ kubeConfig: cluster.kubeConfig, namespace: NS, podLogAnswerMs: 300 });
      const read = async () => {
        for await (const _ of impatient.podLogs('iota', { follow: true, signal: new AbortController().signal })) break;
      };
      await expect(read()).rejects.toMatchObject({ code: 503, message: expect.stringContaining('no answer within 300 ms') });
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});
