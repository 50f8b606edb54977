/**
 * A CPU profile of the full internal app answering by-host under load, with start-up and warm-up
 * left out (a `--cpu-prof` of the whole run is dominated by PGlite's start). Writes
 * /tmp/by-host.cpuprofile (open it in Chrome DevTools or speedscope).
 *
 *   npx tsx bench/profile-by-host.ts            (BENCH_SECONDS, default 6)
 *
 * Sampled attributions under load are rough (time inside builtins lands on their callers); compare
 * variants by requests/s (bench/by-host.ts) before trusting a profile's split.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { pino } from 'pino';
import { SimulatedCluster } from '../src/adapters/cluster/simulated.js';
import { createApps } from '../src/app/index.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { serverCacheOf } from '../src/features/servers/cache.js';
import { systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { serve } from '../src/runtime/serve.js';
import { assembleDeps } from '../src/wiring.js';

const TOKEN = 'bench-proxy-token-0123456789abcdef';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const config = loadConfig({ DATABASE_URL: 'memory:', SERVICE_TOKEN_PROXY: TOKEN, ROOT_DOMAIN: 'felis.test', LOG_LEVEL: 'info' });
const database = await openDatabase({ url: 'memory:', dataDir: '/tmp' });
const cluster = new SimulatedCluster({ clock: systemClock });
for (let i = 0; i < 10_000; i++) {
  cluster.addServer({ name: `s${i}`, subdomain: `play${i}`, memory: '4Gi', storage: '10Gi', cpu: '2', autostartPolicy: 'public', labels: {} });
}
const log = createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: true }));
const deps = assembleDeps({ config, log, database, cluster });
await serverCacheOf(deps).ready();
const server = await serve({ fetch: createApps(deps).internal.fetch, port: 0, host: '127.0.0.1', log: createLogger('warn') });

const autocannon = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const url = `http://127.0.0.1:${server.port}/api/v1/servers/by-host/${encodeURIComponent('PLAY5000.Felis.Test.:25565')}`;
function load(seconds: number): Promise<{ requests: { average: number } }> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [autocannon, '-j', '-c', '50', '-d', String(seconds), '-H', `Authorization=Bearer ${TOKEN}`, url], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(JSON.parse(out)));
  });
}

await load(4); // warm-up (JIT), not profiled
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const result = await load(SECONDS);
const { profile } = await session.post('Profiler.stop');
writeFileSync('/tmp/by-host.cpuprofile', JSON.stringify(profile));
console.log(`by-host ${result.requests.average.toFixed(0)} req/s while profiled; profile in /tmp/by-host.cpuprofile`);
await server.close(100);
cluster.stopTicking();
await database.close();
process.exit(0);
