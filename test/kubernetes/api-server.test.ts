import { describe, expect, it } from 'vitest';
import { KubernetesCluster } from '../../src/adapters/cluster/kubernetes/adapter.js';
import { ManualClock } from '../../src/lib/clock.js';
import { applyManifest, realApiServer, useApiNamespace } from '../helpers/kube-api.js';

/**
 * The adapter against a real kube-apiserver: the shipped CRD is accepted, validates what the
 * adapter writes, and a server created through the adapter is read back as the API server stored it.
 */
describe.skipIf(!realApiServer())('the cluster adapter on a real API server', () => {
  const api = useApiNamespace();

  it('creates a MinecraftServer under the shipped CRD and lists it back', async () => {
    const { kubeConfig, namespace } = api();
    await applyManifest(kubeConfig, 'base/crd.yaml');
    const cluster = new KubernetesCluster({ kubeConfig, namespace, clock: new ManualClock('2026-06-01T12:00:00.000Z') });
    // A new CRD is served a moment after it is created.
    let created;
    for (let tries = 0; !created; tries++) {
      try {
        created = await cluster.createServer({ name: 'survival', subdomain: 'survival', image: 'itzg/minecraft-server:java21', labels: {} });
      } catch (err) {
        if (tries >= 50) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect(created.spec).toMatchObject({ name: 'survival', subdomain: 'survival' });
    const { servers, resourceVersion } = await cluster.listServers();
    expect(servers.map((s) => s.spec.name)).toContain('survival');
    expect(resourceVersion).toMatch(/^\d+$/);
    await cluster.close();
  });
});
