import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, inject } from 'vitest';
import { parseAllDocuments } from 'yaml';

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
 * deploy/rbac.yaml for a test namespace: the ServiceAccount, Role and RoleBinding moved into it,
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
  for (const document of parseAllDocuments(readFileSync(new URL('../../deploy/rbac.yaml', import.meta.url), 'utf8'))) {
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
