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
