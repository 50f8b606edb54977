/**
 * What each in-memory structure of the service holds per server (issue 29), on the compiled output:
 * `tsc -p bench/tsconfig.json && node --expose-gc dist-bench/bench/memory-per-server.js`. Builds the
 * service's parts one after the other over BENCH_SERVERS (10,000) simulated servers, as
 * bench/servers/by-host-fleet.ts does, and prints the V8 heap in use after a full collection at each
 * step (the embedded database runs on its own thread, outside this heap): the modules, the
 * simulated cluster's servers, the deps, the server cache's first fill, one /metrics scrape, the
 * two apps (routes and their zod/OpenAPI schemas), a by-host answer for every server.
 */
import { pino } from 'pino';
import { SimulatedCluster } from '../src/adapters/cluster/simulated.js';
import { createApps } from '../src/app/index.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { assembleDeps } from '../src/service.js';
import { BENCH_TOKEN, BY_HOST_PREFIX, FLEET_SIZE } from './servers/by-host-fleet.js';

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) {
  process.stderr.write('run with node --expose-gc\n');
  process.exit(2);
}
function heapMiB(): number {
  collect!();
  collect!();
  return process.memoryUsage().heapUsed / 1048576;
}
const rows: string[] = [];
let last = heapMiB();
function step(what: string, perServer: boolean): void {
  const now = heapMiB();
  const delta = now - last;
  rows.push(`| ${what} | ${delta.toFixed(1)} | ${perServer ? Math.round((delta * 1048576) / FLEET_SIZE) : ''} | ${now.toFixed(1)} |`);
  last = now;
}
rows.push(`| modules loaded (heap in use at start) | ${last.toFixed(1)} | | ${last.toFixed(1)} |`);

const config = loadConfig({ DATABASE_URL: 'memory:', SERVICE_TOKEN_PROXY: BENCH_TOKEN, ROOT_DOMAIN: 'felis.test', LOG_LEVEL: 'info' });
const database = await openDatabase({ url: 'memory:', dataDir: '/tmp' });
step('the embedded database opened and migrated (its thread is a separate heap)', false);
const cluster = new SimulatedCluster({ clock: systemClock });
for (let i = 0; i < FLEET_SIZE; i++) {
  cluster.addServer({ name: `s${i}`, subdomain: `play${i}`, memory: '4Gi', storage: '10Gi', cpu: '2', autostartPolicy: 'public', labels: {} });
}
step('simulated cluster: the servers', true);
const log = createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: true }));
const deps = assembleDeps({ config, log, database, cluster });
step('deps assembled (metrics registry, log hubs, verifier, worlds)', false);
await deps.serverCache.ready();
step('server cache filled (by name, by host, the ServerInfo views)', true);
await deps.metrics.registry.metrics();
step('one /metrics scrape (label sets)', true);
const apps = createApps(deps);
step('both apps (routes, zod/OpenAPI schemas)', false);
for (let i = 0; i < FLEET_SIZE; i++) {
  const response = await apps.internal.request(`${BY_HOST_PREFIX}play${i}.felis.test`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } });
  if (response.status !== 200) throw new Error(`by-host play${i}: ${response.status}`);
  await response.arrayBuffer();
}
step('a by-host answer for every server', true);
await deps.metrics.registry.metrics();
step('a second /metrics scrape (request label sets)', true);
process.stdout.write(
  [
    `memory-per-server: ${FLEET_SIZE} servers; V8 heap in use after a full collection, main thread`,
    '| step | heap MiB added | bytes per server | heap MiB in use |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
await database.close();
process.exit(0);
