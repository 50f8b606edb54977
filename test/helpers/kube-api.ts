import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, inject } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compactEtcd, envtestAvailable, startEnvtest, type RunningEnvtest } from './envtest.js';
import type { FakeKubelet } from './fake-kubelet.js';
import { TcpProxy } from './tcp-proxy.js';

/**
 * The run's real Kubernetes API server (started once by test/global-setup.ts, see envtest.ts):
 * its admin kubeconfig, or null when the binaries are not on this machine.
 */
export function realApiServer(): string | null {
  return inject('envtestKubeconfig');
}

export function adminKubeConfig(path: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path);
  return kubeConfig;
}

/** Applies every document of a manifest file of deploy/ (create, or replace what is there). */
export async function applyManifest(kubeConfig: KubeConfig, file: string, namespace?: string): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  for (const document of parseAllDocuments(readFileSync(new URL(`../../deploy/${file}`, import.meta.url), 'utf8'))) {
    const object = document.toJS() as KubernetesObject | null;
    if (!object?.kind) continue;
    if (namespace && object.metadata && object.kind !== 'CustomResourceDefinition' && object.kind !== 'Namespace') object.metadata.namespace = namespace;
    try {
      await api.create(object);
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
      const current = await api.read(object as KubernetesObject & { metadata: { name: string } });
      await api.replace({ ...object, metadata: { ...object.metadata, resourceVersion: current.metadata?.resourceVersion } });
    }
  }
}

/**
 * A namespace of this test file's own on the real API server, removed afterwards, so files that
 * share the server never see each other's objects. Call at the top of a `describe.skipIf(!realApiServer())`.
 */
export function useApiNamespace(prefix = 'felis'): () => { kubeConfig: KubeConfig; namespace: string } {
  let kubeConfig: KubeConfig | undefined;
  const namespace = `${prefix}-${randomBytes(3).toString('hex')}`;
  beforeAll(async () => {
    const path = realApiServer();
    if (!path) return;
    kubeConfig = adminKubeConfig(path);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  });
  afterAll(async () => {
    await kubeConfig?.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace }).catch(() => undefined);
  });
  return () => {
    if (!kubeConfig) throw new Error('no real API server in this run');
    return { kubeConfig, namespace };
  };
}

/**
 * deploy/base/rbac.yaml for a test namespace: the ServiceAccount, Role and RoleBinding moved into it,
 * the cluster-wide pieces renamed after it (so files sharing the server do not collide), each
 * subject pointed at the namespace's `felis` account. `edit` may change the Role's rules (a test
 * that takes a verb away).
 */
export async function applyServiceRbac(
  kubeConfig: KubeConfig,
  namespace: string,
  edit: (rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>) => typeof rules = (rules) => rules,
): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  for (const document of parseAllDocuments(readFileSync(new URL('../../deploy/base/rbac.yaml', import.meta.url), 'utf8'))) {
    const object = document.toJS() as KubernetesObject & {
      rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
      subjects?: Array<{ namespace?: string }>;
      roleRef?: { kind: string; name: string };
    };
    if (!object?.kind) continue;
    const clusterWide = object.kind.startsWith('Cluster');
    object.metadata = clusterWide ? { ...object.metadata, name: `${object.metadata!.name}-${namespace}` } : { ...object.metadata, namespace };
    if (object.kind === 'Role' && object.rules) object.rules = edit(object.rules);
    for (const subject of object.subjects ?? []) subject.namespace = namespace;
    if (object.roleRef?.kind === 'ClusterRole') object.roleRef.name = `${object.roleRef.name}-${namespace}`;
    try {
      await api.create(object);
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
      const current = await api.read(object as KubernetesObject & { metadata: { name: string } });
      await api.replace({ ...object, metadata: { ...object.metadata, resourceVersion: current.metadata?.resourceVersion } });
    }
  }
}

/**
 * A kubeconfig that is the service's own ServiceAccount (`felis` in `namespace`), with a token
 * from the TokenRequest API: what the pod's projected token gives the service in a cluster.
 */
export async function serviceAccountKubeConfig(admin: KubeConfig, namespace: string): Promise<KubeConfig> {
  const { status } = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: 'felis',
    namespace,
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster()!;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'felis', token: status!.token }],
    contexts: [{ name: 'felis', cluster: cluster.name, user: 'felis' }],
    currentContext: 'felis',
  });
  return kubeConfig;
}

/**
 * A real API server of this test file's own (started in beforeAll, stopped in afterAll), for what
 * the shared one must not be put through: etcd compaction, a watch cache turned off, connections
 * cut. The service's client goes through a TCP relay (`proxy.cut()` drops its connections, as a
 * lost network or an API server restart does); `admin` talks to the server directly.
 */
export function useOwnApiServer(options: { apiserverArgs?: string[] } = {}): () => {
  admin: KubeConfig;
  /** The same admin identity through the relay. */
  relayed: KubeConfig;
  proxy: TcpProxy;
  compact(): Promise<number>;
} {
  let running: RunningEnvtest | undefined;
  let proxy: TcpProxy | undefined;
  let admin: KubeConfig | undefined;
  let relayed: KubeConfig | undefined;
  beforeAll(async () => {
    if (!envtestAvailable()) return;
    running = startEnvtest(options);
    admin = adminKubeConfig(running.kubeconfig);
    const server = new URL(admin.getCurrentCluster()!.server);
    proxy = await TcpProxy.start(Number(server.port));
    relayed = adminKubeConfig(running.kubeconfig);
    const cluster = relayed.getCurrentCluster()!;
    relayed.clusters = relayed.clusters.map((c) => (c.name === cluster.name ? { ...c, server: `https://127.0.0.1:${proxy!.port}` } : c));
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    running?.stop();
  });
  return () => {
    if (!running || !admin || !relayed || !proxy) throw new Error('no real API server in this run');
    const etcdUrl = running.etcdUrl;
    return { admin, relayed, proxy, compact: () => compactEtcd(etcdUrl) };
  };
}

type PodSpecOf = NonNullable<V1Pod['spec']>;

/**
 * The parts of a cluster that this API server lacks (no controller-manager, no kubelet), played by
 * the test at the moments it chooses: the StatefulSet controller's (`syncStatefulSets`: pod
 * `<set>-0` while the set has a replica, its claim as a volume; gone when scaled to 0 or the set
 * is deleted) and the kubelet's (`setPodReady`). Pods are never bound to a node, so the API server
 * deletes them at once, as a kubelet that confirms at once would.
 */
export class PlayedCluster {
  readonly #core: CoreV1Api;
  readonly #apps: AppsV1Api;

  constructor(
    readonly admin: KubeConfig,
    readonly namespace: string,
  ) {
    this.#core = admin.makeApiClient(CoreV1Api);
    this.#apps = admin.makeApiClient(AppsV1Api);
  }

  /** The namespace's `default` ServiceAccount, which a pod needs (the controller-manager makes it in a cluster). */
  async prepareNamespace(): Promise<void> {
    await this.#core.createNamespacedServiceAccount({ namespace: this.namespace, body: { metadata: { name: 'default' } } }).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 409) throw err;
    });
  }

  async syncStatefulSets(): Promise<void> {
    const namespace = this.namespace;
    const sets = (await this.#apps.listNamespacedStatefulSet({ namespace })).items;
    const pods = (await this.#core.listNamespacedPod({ namespace })).items;
    const byName = new Map(sets.map((s) => [s.metadata!.name!, s]));
    for (const set of sets) {
      const name = `${set.metadata!.name}-0`;
      if ((set.spec?.replicas ?? 1) < 1 || pods.some((p) => p.metadata?.name === name)) continue;
      const template = set.spec!.template;
      const spec: PodSpecOf = {
        ...template.spec!,
        volumes: [
          ...(template.spec?.volumes ?? []),
          ...(set.spec?.volumeClaimTemplates ?? []).map((claim) => ({ name: claim.metadata!.name!, persistentVolumeClaim: { claimName: `${claim.metadata!.name}-${name}` } })),
        ],
      };
      await this.#core.createNamespacedPod({
        namespace,
        body: {
          metadata: {
            name,
            labels: { ...template.metadata?.labels, 'statefulset.kubernetes.io/pod-name': name },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.metadata!.name!, uid: set.metadata!.uid!, controller: true }],
          },
          spec,
        },
      });
    }
    for (const pod of pods) {
      const owner = pod.metadata?.ownerReferences?.find((o) => o.kind === 'StatefulSet');
      if (!owner) continue;
      const set = byName.get(owner.name);
      if (!set || set.metadata?.uid !== owner.uid || (set.spec?.replicas ?? 1) < 1) {
        await this.#core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      }
    }
  }

  /**
   * The Job controller's and the kubelet's part when a Job's one container ends: a pod from the
   * Job's template whose container terminated with `message` (its termination message), and the
   * Job's Complete or Failed condition (`reason`, e.g. DeadlineExceeded, when it failed; such a Job
   * ends without a pod that reported).
   */
  async endJob(
    name: string,
    end: { succeeded: boolean; message?: string; reason?: string; log?: string[] },
    /** Where the pod's log is: its node's FakeKubelet (a Job whose output is read from its log). */
    logs?: { kubelet: FakeKubelet; node: string },
  ): Promise<void> {
    const batch = this.admin.makeApiClient(BatchV1Api);
    const namespace = this.namespace;
    const job = await batch.readNamespacedJob({ name, namespace });
    const template = job.spec!.template;
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    if (end.message !== undefined || end.log !== undefined || end.reason !== 'DeadlineExceeded') {
      const podName = `${name}-${Math.random().toString(36).slice(2, 7)}`;
      const container = template.spec!.containers[0]!.name;
      await this.#core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: podName, labels: { ...template.metadata?.labels, 'job-name': name } },
          spec: { ...template.spec!, ...(logs ? { nodeName: logs.node } : {}) },
        },
      });
      if (logs) {
        for (const line of end.log ?? []) logs.kubelet.appendLog(namespace, podName, container, line);
        logs.kubelet.setState(namespace, podName, container, 'terminated');
      }
      const pod = await this.#core.readNamespacedPod({ name: podName, namespace });
      pod.status = {
        phase: end.succeeded ? 'Succeeded' : 'Failed',
        containerStatuses: [
          {
            name: container,
            image: template.spec!.containers[0]!.image ?? '',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: end.succeeded ? 0 : 1, reason: end.succeeded ? 'Completed' : 'Error', finishedAt: now, ...(end.message !== undefined ? { message: end.message } : {}) } },
          },
        ],
      };
      await this.#core.replaceNamespacedPodStatus({ name: podName, namespace, body: pod });
    }
    const type = end.succeeded ? 'Complete' : 'Failed';
    job.status = {
      ...(end.succeeded ? { succeeded: 1, completionTime: now } : { failed: 1 }),
      startTime: now,
      conditions: [{ type, status: 'True', reason: end.reason ?? (end.succeeded ? 'Completed' : 'BackoffLimitExceeded'), lastProbeTime: now, lastTransitionTime: now }],
    };
    await batch.replaceNamespacedJobStatus({ name, namespace, body: job });
  }

  /**
   * The controller-manager's part for deleted claims: the protection finalizer comes off once no
   * pod uses them (none runs here), so a deleted claim is gone rather than Terminating for ever.
   */
  async releaseDeletedClaims(): Promise<void> {
    const claims = (await this.#core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace })).items;
    for (const claim of claims) {
      if (!claim.metadata?.deletionTimestamp) continue;
      await this.#core.patchNamespacedPersistentVolumeClaim(
        { name: claim.metadata.name!, namespace: this.namespace, body: { metadata: { finalizers: null } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
  }

  /** The kubelet's part: the pod runs and its container reports ready (or not). */
  async setPodReady(name: string, ready: boolean, podIP = '127.0.0.1'): Promise<void> {
    const pod = await this.#core.readNamespacedPod({ name, namespace: this.namespace });
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    pod.status = {
      phase: 'Running',
      podIP,
      startTime: now,
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready,
        restartCount: 0,
        state: { running: { startedAt: now } },
      })),
    };
    await this.#core.replaceNamespacedPodStatus({ name, namespace: this.namespace, body: pod });
  }
}
