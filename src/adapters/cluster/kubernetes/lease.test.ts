import { AuthorizationV1Api, CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminKubeConfig, applyServiceRbac, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../../../../test/helpers/kube-api.js';
import { TcpProxy } from '../../../../test/helpers/tcp-proxy.js';
import { LeaseLock } from './lease.js';

/** Short times, so a test waits a few seconds rather than client-go's 15. */
const TIMING = { leaseDurationMs: 2_000, renewDeadlineMs: 1_000, retryPeriodMs: 100 };

/**
 * Leadership by a coordination.k8s.io Lease on the run's real kube-apiserver: two replicas, one of
 * them reaching the API server through a relay that the test can cut (a replica that reaches the
 * database but not the API server).
 */
describe.skipIf(!realApiServer())('LeaseLock on a real API server', () => {
  const api = useApiNamespace('felis-lease');
  let admin: KubeConfig;
  let NS: string;
  let proxy: TcpProxy;
  let relayed: KubeConfig;
  const locks: LeaseLock[] = [];

  beforeAll(async () => {
    ({ kubeConfig: admin, namespace: NS } = api());
    proxy = await TcpProxy.start(Number(new URL(admin.getCurrentCluster()!.server).port));
    relayed = adminKubeConfig(realApiServer()!);
    const cluster = relayed.getCurrentCluster()!;
    relayed.clusters = relayed.clusters.map((c) => (c.name === cluster.name ? { ...c, server: `https://127.0.0.1:${proxy.port}` } : c));
    return () => proxy.close();
  });
  afterEach(async () => {
    proxy.restore();
    await Promise.all(locks.splice(0).map((l) => l.release()));
  });

  const lock = (identity: string, name: string, kubeConfig = admin, onChange?: (leading: boolean) => void, timing = TIMING) => {
    const l = new LeaseLock({ kubeConfig, namespace: NS, name, identity, timing, onChange });
    locks.push(l);
    return l;
  };
  const lease = (name: string) => admin.makeApiClient(CoordinationV1Api).readNamespacedLease({ name, namespace: NS });

  it('lets one replica lead: the first takes the Lease, the other waits; a release hands it over at once', async () => {
    const a = lock('a', 'one');
    const b = lock('b', 'one');
    expect(await a.acquire()).toBe(true);
    expect(await b.acquire()).toBe(false);
    expect(await a.acquire()).toBe(true); // a renewal
    expect((await lease('one')).spec).toMatchObject({ holderIdentity: 'a', leaseTransitions: 0, leaseDurationSeconds: 2 });
    await a.release();
    expect(a.holds()).toBe(false);
    expect(await b.acquire()).toBe(true);
    expect((await lease('one')).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('never lets two candidates that race for a free Lease both win', async () => {
    const candidates = ['p', 'q', 'r', 's'].map((id) => lock(id, 'race'));
    const won = await Promise.all(candidates.map((c) => c.acquire()));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect((await lease('race')).spec?.holderIdentity).toBe(['p', 'q', 'r', 's'][won.indexOf(true)]);
  });

  it('a leader cut off from the API server steps down by its renew deadline; the other takes over once the lease lapses', async () => {
    const changes: boolean[] = [];
    const cut = lock('cut', 'cut', relayed, (leading) => changes.push(leading));
    const other = lock('other', 'cut');
    cut.start();
    await vi.waitFor(() => expect(cut.holds()).toBe(true), { timeout: 5_000, interval: 20 });
    other.start();
    expect(await other.acquire()).toBe(false);

    proxy.blackHole();
    // Its renewals hang: it steps down by itself (told through onChange), it is not left leading.
    await vi.waitFor(() => expect(changes).toEqual([true, false]), { timeout: 10_000, interval: 20 });
    expect(cut.holds()).toBe(false);
    await vi.waitFor(() => expect(other.holds()).toBe(true), { timeout: 10_000, interval: 20 });
    expect((await lease('cut')).spec).toMatchObject({ holderIdentity: 'other', leaseTransitions: 1 });

    // Back on the network, it finds the Lease held and stays a candidate.
    proxy.restore();
    expect(await cut.acquire()).toBe(false);
    expect(other.holds()).toBe(true);
  });

  it('a candidate sees each renewal through its watch and tries again the moment the record lapses, not at its next retry', async () => {
    const leader = lock('leader', 'lapse', relayed);
    // A retry period far longer than the lease: only a try at the lapse can take over in time.
    const candidate = lock('candidate', 'lapse', admin, undefined, { ...TIMING, retryPeriodMs: 60_000 });
    leader.start();
    await vi.waitFor(() => expect(leader.holds()).toBe(true), { timeout: 5_000, interval: 20 });
    expect(await candidate.acquire()).toBe(false);
    // Without another read of its own, the candidate's next try moves with the leader's renewals (its watch).
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, TIMING.leaseDurationMs / 2));
      expect(candidate.nextTryInMs()).toBeGreaterThan(TIMING.leaseDurationMs / 2);
      expect(candidate.nextTryInMs()).toBeLessThanOrEqual(TIMING.leaseDurationMs + 1);
    }
    candidate.start();

    proxy.blackHole();
    // Taken once the last renewal has stood a lease duration, long before the candidate's 60 s retry.
    await vi.waitFor(() => expect(candidate.holds()).toBe(true), { timeout: 3 * TIMING.leaseDurationMs, interval: 20 });
    expect((await lease('lapse')).spec?.holderIdentity).toBe('candidate');
  });

  it('is allowed by deploy/base/rbac.yaml (the service account gets, watches, creates and updates Leases)', async () => {
    await applyServiceRbac(admin, NS);
    const account = await vi.waitFor(() => serviceAccountKubeConfig(admin, NS), { timeout: 20_000, interval: 100 });
    const l = lock('account', 'rbac', account);
    await vi.waitFor(async () => expect(await l.acquire()).toBe(true), { timeout: 20_000, interval: 100 });
    expect(await l.acquire()).toBe(true);
    expect((await lease('rbac')).spec?.holderIdentity).toBe('account');
    const review = async (verb: string) =>
      (
        await account.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { group: 'coordination.k8s.io', resource: 'leases', namespace: NS, verb } } },
        })
      ).status?.allowed;
    expect(await review('watch')).toBe(true);
    expect(await review('list')).toBe(true);
  });
});
