import { randomInt } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeStandIn } from '../../../test/helpers/kube-stand-in.js';
import { uniqueServerName } from '../../../test/helpers/servers.js';
import { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { kubeConfigFor } from '../../adapters/cluster/kubernetes/kubeconfig.js';
import { DEFAULT_CRD } from '../../adapters/cluster/kubernetes/resource.js';
import { ManualClock } from '../../lib/clock.js';
import { createLogger } from '../../lib/logger.js';
import { LifecycleController } from './controller.js';
import { AdvisoryLock, LeaseLock } from './leader.js';

const NS = 'felis';
let standIn: KubeStandIn;

beforeAll(async () => {
  standIn = await KubeStandIn.start();
  standIn.defineCustomResource(DEFAULT_CRD.group, DEFAULT_CRD.version, DEFAULT_CRD.plural, 'MinecraftServer');
});
afterAll(() => standIn.close());

describe('leader election by a Kubernetes Lease', () => {
  it('lets one of two controllers act; when the leader dies the other takes over within 15 s', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const kubeConfig = kubeConfigFor(standIn.url);
    const cluster = new KubernetesCluster({ kubeConfig, namespace: NS, clock, rconAddress: () => ({ host: '127.0.0.1', port: 1 }) });
    const lease = uniqueServerName('lease');
    const make = (identity: string) =>
      new LifecycleController({
        cluster,
        lock: new LeaseLock({ kubeConfig, namespace: NS, name: lease, identity, clock }),
        rcon: () => Promise.reject(new Error('no RCON in this test')),
        clock,
        log: createLogger('silent'),
      });
    const name = uniqueServerName('led');
    await cluster.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', labels: {} });
    const a = make('replica-a');
    const b = make('replica-b');

    // Both run their passes, interleaved and concurrently, for 20 s: only one ever acts.
    for (let i = 0; i < 10; i += 1) {
      await Promise.all([a.tick(), b.tick()]);
      clock.advance(2_000);
    }
    expect([a.passesActed, b.passesActed].sort()).toEqual([0, 10]);
    const [leader, follower] = a.passesActed > 0 ? [a, b] : [b, a];
    const holder = standIn.get('leases', NS, lease)!.spec!.holderIdentity;
    expect(holder).toBe(leader === a ? 'replica-a' : 'replica-b');

    // The leader dies (no release, no more renewals): the follower keeps trying every 2 s.
    const diedAt = clock.now().getTime();
    const before = follower.passesActed;
    while (follower.passesActed === before) {
      clock.advance(2_000);
      await follower.tick();
      expect(clock.now().getTime() - diedAt).toBeLessThanOrEqual(15_000);
    }
    expect(standIn.get('leases', NS, lease)!.spec).toMatchObject({ holderIdentity: follower === a ? 'replica-a' : 'replica-b', leaseTransitions: 1 });

    // The old leader comes back: it finds the lease held and stands by.
    const acted = leader.passesActed;
    await leader.tick();
    expect(leader.passesActed).toBe(acted);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('stops acting within seconds when it cannot renew, before anyone else may take the lease', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const kubeConfig = kubeConfigFor(standIn.url);
    const name = uniqueServerName('cut');
    const lock = new LeaseLock({ kubeConfig, namespace: NS, name, identity: 'replica-a', clock });
    expect(await lock.acquire()).toBe(true);
    standIn.failNext('PUT', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${name}`, 500, 2);
    clock.advance(5_000);
    expect(await lock.acquire()).toBe(true); // not renewed, but within its renew deadline
    clock.advance(2_000);
    expect(await lock.acquire()).toBe(false); // 7 s without a renewal: it stops acting
    expect(lock.holds()).toBe(false);
    // The lease itself lasts 10 s, so another replica can only take it after this one stopped.
    const other = new LeaseLock({ kubeConfig, namespace: NS, name, identity: 'replica-b', clock });
    expect(await other.acquire()).toBe(false);
    clock.advance(3_000);
    expect(await other.acquire()).toBe(true);
  });
});

const pgUrl = process.env.TEST_DATABASE_URL;

describe.runIf(pgUrl)('leader election by a PostgreSQL advisory lock', () => {
  it('is held by one session at a time and passes on when the holder’s connection dies', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const keys: [number, number] = [randomInt(1, 2 ** 31), randomInt(1, 2 ** 31)];
    const a = new AdvisoryLock({ url: pgUrl!, clock, keys });
    const b = new AdvisoryLock({ url: pgUrl!, clock, keys });
    const admin = postgres(pgUrl!, { max: 1, onnotice: () => {} });
    try {
      expect(await a.acquire()).toBe(true);
      expect(await b.acquire()).toBe(false);
      expect(await a.acquire()).toBe(true);
      expect([a.holds(), b.holds()]).toEqual([true, false]);
      clock.advance(8_000);
      expect(a.holds()).toBe(false); // not checked for longer than its deadline

      // The holder's session is killed (a network cut, a database fail-over): it notices at its next check.
      await admin`select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and classid = ${keys[0]}::int::oid and objid = ${keys[1]}::int::oid`;
      expect(await a.acquire()).toBe(false);
      expect(await b.acquire()).toBe(true);
      expect(await a.acquire()).toBe(false);
    } finally {
      await Promise.all([a.release(), b.release(), admin.end()]);
    }
  });
});
