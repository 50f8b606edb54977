/**
 * How long the server cache takes to list 10,000 MinecraftServer resources from a Kubernetes API
 * (the HTTP stand-in, through @kubernetes/client-node), to follow 10,000 changes through its
 * watch, and how much heap it holds per server.
 *
 *   npx tsx --expose-gc bench/kube-cache.ts        (BENCH_SERVERS, BENCH_UPDATES to change the sizes)
 */
import { KubeStandIn } from '../test/helpers/kube-stand-in.js';
import { KubernetesCluster } from '../src/adapters/cluster/kubernetes/adapter.js';
import { kubeConfigFor } from '../src/adapters/cluster/kubernetes/kubeconfig.js';
import { DEFAULT_CRD, toMinecraftServer } from '../src/adapters/cluster/kubernetes/resource.js';
import { ServerCache } from '../src/features/servers/core/cache.js';

const SERVERS = Number(process.env.BENCH_SERVERS ?? 10_000);
const UPDATES = Number(process.env.BENCH_UPDATES ?? 10_000);
const NS = 'felis';

const gc = (globalThis as { gc?: () => void }).gc;
function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

const standIn = await KubeStandIn.start();
standIn.defineCustomResource(DEFAULT_CRD.group, DEFAULT_CRD.version, DEFAULT_CRD.plural, 'MinecraftServer');
for (let i = 0; i < SERVERS; i += 1) {
  const name = `s${i}`;
  const object = toMinecraftServer(
    { name, subdomain: name, displayName: `Server ${i}`, image: `registry.example/mc@sha256:${'a'.repeat(64)}`, memory: '4Gi', storage: '10Gi', cpu: '2', desiredState: 'Stopped', labels: {} },
    DEFAULT_CRD,
    NS,
  );
  standIn.put('minecraftservers', { ...object, status: { phase: 'Stopped', ready: false, players: { online: 0, max: 20 } } } as never);
}

const cluster = new KubernetesCluster({ kubeConfig: kubeConfigFor(standIn.url), namespace: NS });
const cache = new ServerCache(cluster, 'play.example');

const before = heapUsed();
let started = performance.now();
await cache.ready();
const listMs = performance.now() - started;
const after = heapUsed();
if (cache.size !== SERVERS) throw new Error(`cache holds ${cache.size}, expected ${SERVERS}`);

// Follow: UPDATES status changes written to the API, each delivered through the watch.
started = performance.now();
for (let i = 0; i < UPDATES; i += 1) {
  const name = `s${i % SERVERS}`;
  const object = standIn.get('minecraftservers', NS, name)!;
  standIn.put('minecraftservers', { ...object, status: { ...object.status, players: { online: 1 + (i % 7), max: 20 } } });
}
const writtenMs = performance.now() - started;
const last = `s${(UPDATES - 1) % SERVERS}`;
const want = 1 + ((UPDATES - 1) % 7);
while (cache.get(last)?.resource.status.playersOnline !== want) await new Promise((r) => setTimeout(r, 1));
const followMs = performance.now() - started;

const result = {
  servers: SERVERS,
  list_ms: Math.round(listMs),
  updates: UPDATES,
  follow_ms: Math.round(followMs),
  follow_updates_per_s: Math.round(UPDATES / (followMs / 1000)),
  stand_in_write_ms: Math.round(writtenMs),
  heap_bytes_per_server: gc ? Math.round((after - before) / SERVERS) : 'run with --expose-gc',
  node: process.version,
};
console.log(JSON.stringify(result));
cache.close();
await cluster.close();
await standIn.close();
