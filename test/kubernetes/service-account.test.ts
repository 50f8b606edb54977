import { AppsV1Api, CoreV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { KubernetesCluster, podName } from '../../src/adapters/cluster/kubernetes/adapter.js';
import type { MinecraftServer } from '../../src/adapters/cluster/kubernetes/resource.js';
import { ClusterConflictError, ClusterNoPodError, ClusterNotFoundError } from '../../src/adapters/cluster/types.js';
import { buildJobManifest, DEFAULT_BUILD_JOB_OPTIONS } from '../../src/adapters/cluster/kubernetes/build-jobs.js';
import { planOf, worldJobManifest } from '../../src/adapters/cluster/kubernetes/world-jobs.js';
import type { WorldJobPlan } from '../../src/adapters/cluster/world-jobs.js';
import { LifecycleController } from '../../src/adapters/cluster/kubernetes/controller.js';
import { Leadership } from '../../src/coordination/index.js';
import { LogHubs } from '../../src/features/console/log-hub.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { useTestDatabase } from '../helpers/database.js';
import { captureLog } from '../helpers/log.js';
import { applyManifest, applyServiceRbac, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../helpers/kube-api.js';

const spec = (name: string, extra: object = {}) => ({ name, subdomain: name, image: 'itzg/minecraft-server:java21', labels: {}, ...extra });

/** Retries while the API server is not yet ready for us: a new CRD is served, and new RBAC bindings apply, a moment later. */
async function eventually<T>(run: () => Promise<T>, what: string): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await run();
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (tries >= 100 || (code !== 403 && code !== 404 && !(err instanceof ClusterNotFoundError))) throw new Error(`${what}: ${(err as Error).message}`, { cause: err });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A pod as the StatefulSet controller and the kubelet would leave it: scheduled, running, ready. */
async function playKubelet(admin: KubeConfig, namespace: string, name: string, nodeName?: string): Promise<void> {
  const core = admin.makeApiClient(CoreV1Api);
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels: { app: 'felis-test' } },
      // No token controller here to give the account a token to mount.
      spec: { ...(nodeName ? { nodeName } : {}), automountServiceAccountToken: false, containers: [{ name: 'server', image: 'itzg/minecraft-server:java21' }] },
    },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await core.replaceNamespacedPodStatus({
    name,
    namespace,
    body: {
      metadata: { name, namespace, resourceVersion: (await core.readNamespacedPod({ name, namespace })).metadata!.resourceVersion },
      spec: { ...(nodeName ? { nodeName } : {}), automountServiceAccountToken: false, containers: [{ name: 'server', image: 'itzg/minecraft-server:java21' }] },
      status: { phase: 'Running', startTime: now as never, conditions: [{ type: 'Ready', status: 'True' }] },
    },
  });
}

/**
 * The adapter as the service runs it in a cluster: signed in as its own ServiceAccount, with
 * deploy/base/rbac.yaml's Role and nothing more, against a real kube-apiserver. A verb the service
 * needs that the Role lacks is a 403 here, so it fails these tests.
 */
const database = useTestDatabase();

describe.skipIf(!realApiServer())('the cluster adapter as its own service account, on a real API server', () => {
  const api = useApiNamespace('felis-sa');
  let cluster: KubernetesCluster;
  let admin: KubeConfig;
  let namespace: string;

  beforeAll(async () => {
    ({ kubeConfig: admin, namespace } = api());
    await applyManifest(admin, 'base/crd.yaml');
    await applyServiceRbac(admin, namespace);
    // No controller-manager here: the namespace's `default` account a pod needs is made by hand.
    await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    const kubeConfig = await eventually(() => serviceAccountKubeConfig(admin, namespace), 'token');
    cluster = new KubernetesCluster({ kubeConfig, namespace, clock: new ManualClock('2026-06-01T12:00:00.000Z'), watchBackoffMs: { initial: 20, max: 200 }, eula: true });
    await eventually(() => cluster.listServers(), 'list as the service account');
    return () => cluster.close();
  });

  it('creates a server with its RCON Secret, refuses a second of the same name, patches, and deletes', async () => {
    const created = await eventually(() => cluster.createServer(spec('alpha', { displayName: 'Alpha', memory: '2Gi' })), 'create');
    expect(created.spec).toMatchObject({ name: 'alpha', displayName: 'Alpha', desiredState: 'Stopped' });
    await expect(cluster.createServer(spec('alpha'))).rejects.toBeInstanceOf(ClusterConflictError);
    const secret = await admin.makeApiClient(CoreV1Api).readNamespacedSecret({ name: 'alpha-rcon', namespace });
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'MinecraftServer', name: 'alpha' });

    expect((await cluster.setDesiredState('alpha', 'Running')).spec.desiredState).toBe('Running');
    expect((await cluster.updateServer('alpha', { displayName: 'After' })).spec).toMatchObject({ displayName: 'After', memory: '2Gi', desiredState: 'Running' });
    const withStatus = await cluster.patchServerStatus('alpha', { phase: 'Starting', ready: false });
    expect(withStatus.status).toMatchObject({ phase: 'Starting', ready: false });
    await expect(cluster.setDesiredState('ghost', 'Running')).rejects.toBeInstanceOf(ClusterNotFoundError);

    await cluster.removeServer('alpha');
    await expect(cluster.getServerObject('alpha')).rejects.toBeInstanceOf(ClusterNotFoundError);
  });

  it('loses no field when two replicas patch the same server at once (no resourceVersion conflict to lose)', async () => {
    await cluster.createServer(spec('beta'));
    await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => cluster.updateServer('beta', { displayName: `name ${i}` })),
      cluster.setDesiredState('beta', 'Running'),
      cluster.patchServerStatus('beta', { phase: 'Starting' }),
    ]);
    const beta = await cluster.getServerObject('beta');
    expect(beta.spec.desiredState).toBe('Running');
    expect(beta.spec.displayName).toMatch(/^name \d$/);
    expect(beta.status?.phase).toBe('Starting');
  });

  it('a write carrying a stale resourceVersion is a 409 from the server, the conflict the merge patches avoid', async () => {
    const { CustomObjectsApi } = await import('@kubernetes/client-node');
    const custom = admin.makeApiClient(CustomObjectsApi);
    const params = { group: 'felis.dev', version: 'v1alpha1', namespace, plural: 'minecraftservers', name: 'beta' };
    const stale = (await custom.getNamespacedCustomObject(params)) as MinecraftServer;
    await cluster.updateServer('beta', { displayName: 'moved on' });
    await expect(custom.replaceNamespacedCustomObject({ ...params, body: stale })).rejects.toMatchObject({ code: 409 });
  });

  it('watches from the list: sees changes and deletions, and ends with 410 Gone from a compacted version, then lists again', async () => {
    const { servers, resourceVersion } = await cluster.listServers();
    expect(servers.map((s) => s.spec.name)).toContain('beta');
    const events: string[] = [];
    const watch = cluster.watchServers(resourceVersion, (event) => events.push(`${event.type} ${'server' in event ? event.server.spec.name : event.name}`), () => events.push('expired'));
    await cluster.createServer(spec('gamma'));
    await cluster.setDesiredState('gamma', 'Running');
    await cluster.removeServer('gamma');
    await expect.poll(() => events, { timeout: 10_000 }).toEqual(expect.arrayContaining(['ADDED gamma', 'MODIFIED gamma', 'DELETED gamma']));
    watch.stop();

    // A version older than the server keeps: the watch ends with 410 Gone and the caller lists again.
    const expired: Error[] = [];
    const old = cluster.watchServers('1', () => undefined, (err) => expired.push(err));
    await expect.poll(() => expired.length, { timeout: 10_000 }).toBe(1);
    old.stop();
    expect(expired[0]!.name).toBe('WatchExpiredError');
    const again = await cluster.listServers();
    const after: string[] = [];
    const fresh = cluster.watchServers(again.resourceVersion, (event) => after.push(event.type), () => after.push('expired'));
    await cluster.setDesiredState('beta', 'Stopped');
    await expect.poll(() => after, { timeout: 10_000 }).toEqual(['MODIFIED']);
    fresh.stop();
  });

  it('counts Ready nodes for capacity (the node-reader ClusterRole), and reads the RCON Secret once a pod runs', async () => {
    await admin.makeApiClient(CoreV1Api).createNode({ body: { metadata: { name: `${namespace}-node` } } }).catch(() => undefined);
    const core = admin.makeApiClient(CoreV1Api);
    const node = await core.readNode({ name: `${namespace}-node` });
    // Ready, with a kubelet address where nothing listens (so its pods' logs cannot be read).
    await core.replaceNodeStatus({
      name: `${namespace}-node`,
      body: {
        ...node,
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: 1 } },
        },
      },
    });
    const capacity = await cluster.capacity();
    expect(capacity.nodes).toBeGreaterThanOrEqual(1);

    await expect(cluster.rconEndpoint('beta')).rejects.toBeInstanceOf(ClusterNoPodError);
    await playKubelet(admin, namespace, podName('beta'), `${namespace}-node`);
    await expect(cluster.rconEndpoint('beta')).resolves.toMatchObject({ host: `beta.${namespace}.svc`, password: expect.any(String) });
  });

  it('tells a pod without a running container (404/400) from a log the server cannot give (500): only the first is "no pod"', async () => {
    const signal = new AbortController().signal;
    const read = async (server: string) => {
      for await (const _ of cluster.podLogs(server, { follow: false, tailLines: 10, signal })) void _;
    };
    await expect(read('nopod')).rejects.toBeInstanceOf(ClusterNoPodError);
    // beta's pod runs on a node whose kubelet does not answer: the API server answers 500.
    const failure: unknown = await read('beta').then(() => undefined, (err: unknown) => err);
    expect(failure).not.toBeInstanceOf(ClusterNoPodError);
    expect(failure).toMatchObject({ code: 500 });

    // The console's hub reports it as a cluster fault (503 to the viewer), with a warn line.
    const captured = captureLog();
    const hub = new LogHubs({ cluster, clock: new ManualClock('2026-06-01T12:00:00.000Z'), log: captured.log }).hub('beta');
    await hub.ready;
    expect(hub).toMatchObject({ ended: true, failed: true });
    expect(captured.lines().find((l) => l.msg === 'console log unreadable')).toMatchObject({ level: 'warn', status: 500 });
  });

  it('runs the lifecycle controller: a StatefulSet and a Service per server, scaled up on wake and down on stop', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const controller = new LifecycleController({
      cluster,
      lock: new Leadership({ db: database().db, clock, replica: 'a' }, { name: `lifecycle-${namespace}` }),
      rcon: () => Promise.reject(new Error('no RCON in this test')),
      clock,
      log: createLogger('silent'),
    });
    await cluster.createServer(spec('delta'));
    await controller.tick();
    const apps = admin.makeApiClient(AppsV1Api);
    const set = await apps.readNamespacedStatefulSet({ name: 'delta', namespace });
    expect(set.spec).toMatchObject({ replicas: 0, serviceName: 'delta' });
    expect((await admin.makeApiClient(CoreV1Api).readNamespacedService({ name: 'delta', namespace })).spec?.ports?.map((p) => p.port)).toEqual([25565, 25575]);

    await cluster.setDesiredState('delta', 'Running');
    await controller.tick();
    expect((await apps.readNamespacedStatefulSet({ name: 'delta', namespace })).spec?.replicas).toBe(1);
    const woken = await cluster.getServerObject('delta');
    expect(woken.status).toMatchObject({ phase: 'Starting', ready: false });
    // Operator conventions: the status says which spec generation it answers, conditions are a map by type.
    expect(woken.metadata.generation).toBeGreaterThan(1);
    expect(woken.status?.observedGeneration).toBe(woken.metadata.generation);
    expect(woken.status?.conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'Starting', observedGeneration: woken.metadata.generation }),
      expect.objectContaining({ type: 'Progressing', status: 'True', reason: 'Starting', observedGeneration: woken.metadata.generation }),
      expect.objectContaining({ type: 'Degraded', status: 'False', observedGeneration: woken.metadata.generation }),
    ]);
    // ...and a core Event on the server, written as the service account (the Role must allow it).
    const events = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=delta' });
    expect(events.items.map((e) => [e.type, e.reason, e.involvedObject.kind, e.involvedObject.uid])).toContainEqual(['Normal', 'Starting', 'MinecraftServer', woken.metadata.uid]);

    await cluster.setDesiredState('delta', 'Stopped');
    await controller.tick();
    await controller.tick();
    expect((await apps.readNamespacedStatefulSet({ name: 'delta', namespace })).spec?.replicas).toBe(0);
    await controller.stop();
  });

  it('creates the world and build Jobs as the API server validates them, watches them to the end, and deletes them', async () => {
    const jobId = '0b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b';
    const world = worldJobManifest(
      { jobId, serverName: 'beta', kind: 'backup', step: { op: 'backup', key: 'worlds/beta/x.tar.gz' }, backupId: '1b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b' } as WorldJobPlan,
      { namespace, image: 'ghcr.io/felis/control-plane:4.1.0', storeSecret: 'felis-backup-store', deadlineSeconds: 3600 },
    );
    const build = buildJobManifest(
      { buildId: '3f0c1f7e-58a9-4c1e-9f55-0d7a1c2b3e4f', imageRef: 'registry.felis.test/m:0123', contextRef: 'submissions/x', contextDigest: 'a'.repeat(64), dockerfile: 'FROM felis/paper' },
      { ...DEFAULT_BUILD_JOB_OPTIONS, namespace, internalUrl: 'http://felis-internal.felis.svc:8081' },
    );
    const seen: string[] = [];
    const watch = cluster.watchJobs('app.kubernetes.io/part-of=felis', (type, job) => seen.push(`${type} ${job.metadata?.name}`));
    for (const manifest of [world, build]) {
      const created = await cluster.createJob(manifest);
      // Nothing we send is dropped as a field the server does not serve.
      const sent = (job: V1Job) =>
        JSON.parse(JSON.stringify([...(job.spec?.template.spec?.initContainers ?? []), ...(job.spec?.template.spec?.containers ?? [])].map((c) => [c.name, c.image, c.command, c.args, c.env, c.envFrom, c.volumeMounts])));
      expect(sent(created)).toEqual(sent(manifest));
      expect(created.metadata?.annotations).toMatchObject(manifest.metadata?.annotations ?? {});
    }
    expect(planOf((await cluster.getJob(world.metadata!.name!))!)).toMatchObject({ jobId, serverName: 'beta' });
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(expect.arrayContaining([`ADDED ${world.metadata!.name}`, `ADDED ${build.metadata!.name}`]));
    expect((await cluster.listJobs(`felis.dev/world-job=${jobId}`)).map((j) => j.metadata?.name)).toEqual([world.metadata!.name]);
    await cluster.deleteJob(world.metadata!.name!);
    await cluster.deleteJob(build.metadata!.name!);
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(expect.arrayContaining([`DELETED ${world.metadata!.name}`]));
    watch.stop();

    // The world claim: read, and deleted after a verified archive (idle reclaim).
    expect(await cluster.getPersistentVolumeClaim('world-beta-0')).toBeUndefined();
    await cluster.deletePersistentVolumeClaim('world-beta-0');
  });
});

/**
 * The same service account with one verb taken from its Role: the service's call fails with the
 * API server's 403, so a Role that lacks what the service needs fails the tests above. A pod log
 * refused by RBAC is a cluster fault, never "no pod".
 */
describe.skipIf(!realApiServer())('the service account with a verb taken from its Role', () => {
  const api = useApiNamespace('felis-rbac');

  it('cannot read a pod log without pods/log get, and the console says so as a fault', async () => {
    const { kubeConfig: admin, namespace } = api();
    await applyManifest(admin, 'base/crd.yaml');
    await applyServiceRbac(admin, namespace, (rules) => rules.filter((rule) => !rule.resources.includes('pods/log')));
    await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    const cluster = new KubernetesCluster({ kubeConfig: await eventually(() => serviceAccountKubeConfig(admin, namespace), 'token'), namespace });
    await eventually(() => cluster.listServers(), 'list as the service account');
    await playKubelet(admin, namespace, podName('epsilon'));
    const signal = new AbortController().signal;
    const failure: unknown = await (async () => {
      for await (const _ of cluster.podLogs('epsilon', { follow: false, tailLines: 10, signal })) void _;
    })().then(() => undefined, (err: unknown) => err);
    expect(failure).toMatchObject({ code: 403 });

    const captured = captureLog();
    const hub = new LogHubs({ cluster, clock: new ManualClock('2026-06-01T12:00:00.000Z'), log: captured.log }).hub('epsilon');
    await hub.ready;
    expect(hub.failed).toBe(true);
    expect(captured.lines().find((l) => l.msg === 'console log unreadable')).toMatchObject({ level: 'warn', status: 403 });
    await cluster.close();
  });
});

/**
 * The Role without `patch` on StatefulSets: the controller writes them by server-side apply (a
 * patch), so its pass makes no StatefulSet and says why; this is how the controller's tests above
 * fail when the Role lacks a verb they use.
 */
describe.skipIf(!realApiServer())('the service account whose Role cannot patch StatefulSets', () => {
  const api = useApiNamespace('felis-nopatch');

  it('cannot apply a StatefulSet: the pass logs the 403 and leaves no set', async () => {
    const { kubeConfig: admin, namespace } = api();
    await applyManifest(admin, 'base/crd.yaml');
    await applyServiceRbac(admin, namespace, (rules) =>
      rules.map((rule) => (rule.resources.includes('statefulsets') ? { ...rule, verbs: rule.verbs.filter((verb) => verb !== 'patch') } : rule)),
    );
    const cluster = new KubernetesCluster({ kubeConfig: await eventually(() => serviceAccountKubeConfig(admin, namespace), 'token'), namespace });
    await eventually(() => cluster.listServers(), 'list as the service account');
    await cluster.createServer(spec('zeta'));
    const captured = captureLog();
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const controller = new LifecycleController({
      cluster,
      lock: new Leadership({ db: database().db, clock, replica: 'a' }, { name: `lifecycle-${namespace}` }),
      rcon: () => Promise.reject(new Error('no RCON in this test')),
      clock,
      log: captured.log,
    });
    await controller.tick();
    const failed = captured.lines().find((l) => l.msg === 'lifecycle controller: reconcile failed');
    expect(failed).toMatchObject({ level: 'warn', server: 'zeta' });
    expect(JSON.stringify(failed)).toContain('403');
    await expect(admin.makeApiClient(AppsV1Api).readNamespacedStatefulSet({ name: 'zeta', namespace })).rejects.toMatchObject({ code: 404 });
    await controller.stop();
    await cluster.close();
  });
});
