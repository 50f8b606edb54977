/**
 * A CPU profile of the full internal app answering by-host under load, with start-up and warm-up
 * left out (a `--cpu-prof` of the whole run is dominated by PGlite's start). Writes
 * /tmp/by-host-<target>.cpuprofile (open it in Chrome DevTools or speedscope).
 *
 *   npx tsx bench/profile-by-host.ts [full|hono|floor]     (BENCH_SECONDS, default 6)
 *
 * `hono` and `floor` profile bench/by-host.ts's bare route and its "required work only", to set
 * them side by side with the full app. Sampled
 * attributions under load are rough (time inside builtins lands on their callers); compare variants
 * by requests/s (bench/by-host.ts) before trusting a profile's split.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { createApps } from '../src/app/index.js';
import { createLogger } from '../src/lib/logger.js';
import { serve } from '../src/runtime/serve.js';
import { bareHono, requiredWorkOnly } from './servers/by-host-baselines.js';
import { BENCH_HOST, BENCH_TOKEN, BY_HOST_PREFIX, byHostFleet } from './servers/by-host-fleet.js';

const target = process.argv[2] ?? 'full';
if (target !== 'full' && target !== 'hono' && target !== 'floor') throw new Error('usage: profile-by-host.ts [full|hono|floor]');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const { deps, cache } = await byHostFleet();
const fetch = target === 'full' ? createApps(deps).internal.fetch : target === 'floor' ? requiredWorkOnly(deps, cache).fetch : bareHono(cache).fetch;
const server = await serve({ fetch, port: 0, host: '127.0.0.1', log: createLogger('warn') });

const autocannon = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const url = `http://127.0.0.1:${server.port}${BY_HOST_PREFIX}${encodeURIComponent(BENCH_HOST)}`;
function load(seconds: number): Promise<{ requests: { average: number } }> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [autocannon, '-j', '-c', '50', '-d', String(seconds), '-H', `Authorization=Bearer ${BENCH_TOKEN}`, url], {
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
const file = `/tmp/by-host-${target}.cpuprofile`;
writeFileSync(file, JSON.stringify(profile));
console.log(`by-host (${target}) ${result.requests.average.toFixed(0)} req/s while profiled; profile in ${file}`);
process.exit(0);
