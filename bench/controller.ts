/**
 * Issue 40's lifecycle controller at the size and faults of a community, with the goal beside
 * each figure.
 *
 *   npm run bench:controller      (BENCH_SERVERS=200 BENCH_RUNNING=50 BENCH_REST_S=30 to change the sizes)
 *
 * One real API server and etcd of its own (tools/envtest, binaries in ENVTEST_BIN); two replicas
 * of the controller in this process (compiled), each with its own client, caches, work queue and
 * Lease lock with client-go's timing (15 s lease, 10 s renew deadline, 2 s retry); replica A
 * reaches the API server through a TCP relay that the bench cuts. The bench plays what the API
 * server lacks: the StatefulSet controller and the kubelet (pods made Running and Ready), and the
 * games' RCON (one peer that answers `list`, and one that accepts and never answers: a frozen JVM).
 *
 * Printed: API requests/s at rest (kube-apiserver's own apiserver_request_total, over the rest
 * window, against the same counter with no controller running in the same run), wake → StatefulSet
 * scaled with 10 hung games among the running (p50/p95 of 20 wakes), leadership changes at rest,
 * a hand-scaled Stopped set back at 0, a leader cut off from the API server replaced, the wake
 * asked at the cut carried out by the other replica, and the heap the caches of one replica hold.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, KubernetesObjectApi, PatchStrategy, setHeaderOptions, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { KubernetesCluster } from '../src/adapters/cluster/kubernetes/adapter.js';
import { LifecycleController } from '../src/adapters/cluster/kubernetes/controller.js';
import { LeaseLock, LEASE_TIMING } from '../src/adapters/cluster/kubernetes/lease.js';
import { RconConnection } from '../src/adapters/rcon/client.js';
import { systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { envtestAvailable, startEnvtest } from '../test/helpers/envtest.js';
import { adminKubeConfig, PlayedCluster } from '../test/helpers/kube-api.js';
import { startRconPeer } from '../test/helpers/rcon-peer.js';
import { TcpProxy } from '../test/helpers/tcp-proxy.js';

const SERVERS = Number(process.env.BENCH_SERVERS ?? 200);
const RUNNING = Number(process.env.BENCH_RUNNING ?? 50);
const REST_S = Number(process.env.BENCH_REST_S ?? 30);
const HUNG = 10;
const WAKES = 20;
const NS = 'felis';
const FIXED = 7;
const PASSWORD = Buffer.from(new Uint8Array(24).fill(FIXED)).toString('base64url');

if (!envtestAvailable()) {
  console.error('no kube-apiserver binaries (npm run envtest:build)');
  process.exit(1);
}

const log = createLogger((process.env.BENCH_LOG as 'silent' | undefined) ?? 'silent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, everyMs = 25): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return (performance.now() - started) / 1000;
    if (performance.now() - started > timeoutMs) throw new Error(`timed out: ${what}`);
    await sleep(everyMs);
  }
}
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]!;
const goal = (value: number, limit: number, unit: string) => `${value.toFixed(2)} ${unit} (goal ≤ ${limit} ${unit}: ${value <= limit ? 'met' : 'NOT met'})`;

const envtest = startEnvtest();
// An interrupted run still stops its API server and etcd.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    envtest.stop();
    process.exit(130);
  });
}
const hungSockets = new Set<Socket>();
const hung = createServer((socket) => {
  hungSockets.add(socket);
  socket.on('close', () => hungSockets.delete(socket));
});
await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
const hungPort = (hung.address() as AddressInfo).port;
const peer = await startRconPeer({ password: PASSWORD });
const hungNames = new Set<string>();

try {
  const admin = adminKubeConfig(envtest.kubeconfig);
  const core = admin.makeApiClient(CoreV1Api);
  const apps = admin.makeApiClient(AppsV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  const writer = new KubernetesCluster({ kubeConfig: admin, namespace: NS, random: { bytes: (n) => new Uint8Array(n).fill(FIXED) } });
  // The CRD from the checkout (the bench runs compiled, from dist-bench/).
  for (const doc of parseAllDocuments(readFileSync(join(process.cwd(), 'deploy', 'base', 'crd.yaml'), 'utf8'))) {
    const object = doc.toJS() as KubernetesObject | null;
    if (object?.kind) await KubernetesObjectApi.makeApiClient(admin).create(object);
  }
  await until(async () => {
    try {
      await writer.listServers();
      return true;
    } catch {
      return false;
    }
  }, 30_000, 'the CRD served');
  const played = new PlayedCluster(admin, NS);
  await played.prepareNamespace();

  /** Requests the API server has served so far (its own counter). */
  const served = async (): Promise<number> => {
    const text = await (await fetchAdmin('/metrics')).text();
    let total = 0;
    for (const line of text.split('\n')) if (line.startsWith('apiserver_request_total{')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
    return total;
  };
  async function fetchAdmin(path: string): Promise<Response> {
    const user = admin.getCurrentUser()!;
    const { fetch, Agent } = await import('undici');
    return fetch(`${admin.getCurrentCluster()!.server}${path}`, {
      headers: { Authorization: `Bearer ${user.token}` },
      dispatcher: new Agent({ connect: { rejectUnauthorized: false } }),
    }) as unknown as Response;
  }

  const proxy = await TcpProxy.start(Number(new URL(admin.getCurrentCluster()!.server).port));
  const relayed = adminKubeConfig(envtest.kubeconfig);
  relayed.clusters = relayed.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${proxy.port}` }));
  const replica = (kubeConfig: KubeConfig, identity: string) => {
    const cluster = new KubernetesCluster({
      kubeConfig,
      namespace: NS,
      eula: true,
      random: { bytes: (n) => new Uint8Array(n).fill(FIXED) },
      rconAddress: (name) => ({ host: '127.0.0.1', port: hungNames.has(name) ? hungPort : peer.endpoint.port }),
    });
    const lock = new LeaseLock({ kubeConfig, namespace: NS, name: 'felis-lifecycle-controller', identity, log });
    const controller = new LifecycleController({
      cluster,
      lock,
      rcon: (endpoint, timeoutMs) => RconConnection.open(endpoint, { connectTimeoutMs: timeoutMs, commandTimeoutMs: timeoutMs }),
      clock: systemClock,
      log,
      leaseRetryMs: LEASE_TIMING.retryPeriodMs,
    });
    return { cluster, lock, controller };
  };

  // The fleet: SERVERS servers, the first RUNNING of them to run.
  const names = Array.from({ length: SERVERS }, (_, i) => `s${String(i).padStart(4, '0')}`);
  for (let i = 0; i < names.length; i += 10) {
    await Promise.all(
      names.slice(i, i + 10).map((name, j) =>
        writer.createServer({ name, subdomain: name, image: 'itzg/minecraft-server:java21', desiredState: i + j < RUNNING ? 'Running' : 'Stopped', labels: {} }),
      ),
    );
  }
  const idleBefore = await served();
  await sleep(REST_S * 1000);
  const idleRate = (await served() - idleBefore - 1) / REST_S;

  const a = replica(relayed, `a_${randomBytes(4).toString('hex')}`);
  const b = replica(admin, `b_${randomBytes(4).toString('hex')}`);
  // Collected on both sides, so the garbage of making the fleet is not counted against the caches.
  const gc = () => (globalThis as { gc?: () => void }).gc?.();
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  a.controller.start();
  await until(() => a.lock.holds(), 30_000, 'A leads');
  b.controller.start();

  // Play the StatefulSet controller and the kubelet until every running server is Running and ready
  // (each look lists every set and pod: once a second, so the API server is left to the controllers).
  await until(async () => {
    await played.syncStatefulSets();
    const pods = (await core.listNamespacedPod({ namespace: NS })).items;
    for (const pod of pods) if (pod.status?.phase !== 'Running') await played.setPodReady(pod.metadata!.name!, true);
    const servers = a.cluster.caches.list('servers');
    return servers.filter((s) => s.status?.phase === 'Running' && s.status.ready).length === RUNNING && servers.filter((s) => s.status?.phase === 'Stopped').length === SERVERS - RUNNING;
  }, Math.max(600_000, SERVERS * 1_200), 'the fleet at rest', 1_000);
  gc();
  const heapPerReplicaMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 / 2 ** 20;

  // At rest: the API server's request rate with the two replicas running, and leadership changes.
  const transitions = a.lock.transitions + b.lock.transitions;
  const restBefore = await served();
  await sleep(REST_S * 1000);
  const restRate = (await served() - restBefore - 1) / REST_S;
  const changes = a.lock.transitions + b.lock.transitions - transitions;

  // 10 of the running games freeze (accept, never answer); then 20 wakes, one after another.
  for (const name of names.slice(0, HUNG)) hungNames.add(name);
  await until(() => hungSockets.size >= HUNG, 60_000, 'the hung games probed');
  const wakeSeconds: number[] = [];
  // Stopped servers to wake, leaving the last two Stopped for the figures after.
  for (const name of names.slice(RUNNING, Math.min(RUNNING + WAKES, SERVERS - 2))) {
    const started = performance.now();
    await writer.setDesiredState(name, 'Running');
    await until(async () => (await apps.readNamespacedStatefulSet({ name, namespace: NS })).spec?.replicas === 1, 60_000, `wake ${name}`);
    wakeSeconds.push((performance.now() - started) / 1000);
  }

  // Someone scales a Stopped server's set by hand.
  const stopped = names[SERVERS - 1]!;
  await apps.patchNamespacedStatefulSetScale({ name: stopped, namespace: NS, body: { spec: { replicas: 1 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  const scaledBack = await until(async () => (await apps.readNamespacedStatefulSet({ name: stopped, namespace: NS })).spec?.replicas === 0, 60_000, 'scaled back').catch((err: unknown) => {
    for (const r of [a, b]) {
      const set = r.cluster.caches.get('statefulsets', stopped);
      console.error(r.lock.identity, r.lock.holds(), set?.spec?.replicas, set?.metadata?.resourceVersion, r.cluster.caches.get('servers', stopped)?.status?.phase, r.cluster.caches.sizes());
    }
    throw err;
  });

  // The leader (A) loses the API server; a wake is asked at that moment.
  const leaderIsA = a.lock.holds();
  proxy.blackHole();
  const cutAt = performance.now();
  const woken = names[SERVERS - 2]!;
  await writer.setDesiredState(woken, 'Running');
  let carriedOut = 0;
  const replaced = await until(() => (leaderIsA ? b.lock.holds() : true), 60_000, 'B leads');
  await until(async () => (await apps.readNamespacedStatefulSet({ name: woken, namespace: NS })).spec?.replicas === 1, 60_000, 'wake after the cut');
  carriedOut = (performance.now() - cutAt) / 1000;
  proxy.restore();

  console.log(JSON.stringify({ servers: SERVERS, running: RUNNING, rest_window_s: REST_S, idle_requests_per_s: +idleRate.toFixed(2), rest_requests_per_s: +restRate.toFixed(2) }));
  console.log(`API requests/s at rest, ${SERVERS} servers of which ${RUNNING} run: ${goal(restRate, 5, 'req/s')}; with no controller: ${idleRate.toFixed(2)} req/s`);
  console.log(`wake → StatefulSet scaled, ${HUNG} hung games among the running: p50 ${percentile(wakeSeconds, 50).toFixed(2)} s, p95 ${goal(percentile(wakeSeconds, 95), 3, 's')}`);
  console.log(`leadership changes in ${REST_S} s at rest: ${changes} (goal 0: ${changes === 0 ? 'met' : 'NOT met'})`);
  console.log(`hand-scaled Stopped set back at 0: ${goal(scaledBack, 10, 's')}`);
  console.log(`leader cut off from the API server replaced: ${leaderIsA ? goal(replaced, 20, 's') : 'A was not leading; not measured'}`);
  console.log(`a wake asked when the leader was cut off, carried out by the other: ${goal(carriedOut, 15, 's')} (floor: the 15 s lease, counted by the other from the last renewal it watched, up to a 2 s retry before the cut)`);
  console.log(`heap per replica (caches of ${SERVERS} servers, their sets, services, pods, secrets): ${heapPerReplicaMiB.toFixed(1)} MiB`);
  await Promise.all([a.controller.stop(), b.controller.stop()]);
  await Promise.all([a.cluster.close(), b.cluster.close(), writer.close()]);
  await proxy.close();
} finally {
  for (const socket of hungSockets) socket.destroy();
  hung.close();
  peer.close();
  envtest.stop();
}
process.exit(0);
