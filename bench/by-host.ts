/**
 * `by-host` with 10,000 servers: the full internal app (request id, observation with metrics and a
 * log line, security headers, cross-site guard, token check, validation) against two baselines in
 * the same run: a bare Hono route on the same cache and a bare node:http server.
 *
 *   npx tsx bench/by-host.ts            (Node, @hono/node-server)
 *   npx bun bench/by-host.ts            (Bun, Bun.serve)
 *
 * The load generator (autocannon) runs in a child Node process so it never shares the servers'
 * event loop. BENCH_SECONDS (default 5) and BENCH_CONNECTIONS (default 50) tune a run.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { Hono } from 'hono';
import { pino } from 'pino';
import { SimulatedCluster } from '../src/adapters/cluster/simulated.js';
import { createApps } from '../src/app/index.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { serverCacheOf } from '../src/features/servers/cache.js';
import { systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { isBun, serve } from '../src/runtime/serve.js';
import { assembleDeps } from '../src/wiring.js';

const SERVERS = 10_000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TOKEN = 'bench-proxy-token-0123456789abcdef';

// BENCH_LOG_LEVEL=warn leaves out the request line, to show what it costs.
const config = loadConfig({
  DATABASE_URL: 'memory:',
  SERVICE_TOKEN_PROXY: TOKEN,
  ROOT_DOMAIN: 'felis.test',
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
});
const database = await openDatabase({ url: 'memory:', dataDir: '/tmp' });
const cluster = new SimulatedCluster({ clock: systemClock });
for (let i = 0; i < SERVERS; i++) {
  cluster.addServer({ name: `s${i}`, subdomain: `play${i}`, memory: '4Gi', storage: '10Gi', cpu: '2', autostartPolicy: 'public', labels: {} });
}
const deps = assembleDeps({
  config,
  // A real log line per request, written as main.ts writes it (to /dev/null instead of stdout).
  log: createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: true })),
  database,
  cluster,
});
const cache = serverCacheOf(deps);
await cache.ready();

const full = createApps(deps).internal;
const bare = new Hono().get('/api/v1/servers/by-host/:host', (c) => {
  const server = cache.byHost(c.req.param('host'));
  return server ? c.json(server.info) : c.json({ error: { code: 'not_found', message: 'none' } }, 404);
});
const PREFIX = '/api/v1/servers/by-host/';
const raw = createServer((req, res) => {
  const url = req.url ?? '';
  const server = url.startsWith(PREFIX) ? cache.byHost(decodeURIComponent(url.slice(PREFIX.length))) : undefined;
  res.writeHead(server ? 200 : 404, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(server ? server.info : { error: { code: 'not_found' } }));
});

const log = createLogger('warn');
const targets = [
  { label: 'felis internal app', listen: () => serve({ fetch: full.fetch, port: 0, host: '127.0.0.1', log }) },
  { label: 'bare Hono route', listen: () => serve({ fetch: bare.fetch, port: 0, host: '127.0.0.1', log }) },
  {
    label: 'bare node:http',
    listen: () =>
      new Promise<{ port: number; close: () => Promise<void> }>((resolve) => {
        raw.listen(0, '127.0.0.1', () =>
          resolve({ port: (raw.address() as AddressInfo).port, close: () => new Promise((done) => raw.close(() => done())) }),
        );
      }),
  },
];

interface Result {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

function load(port: number): Promise<{ requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number }> {
  const host = `PLAY${SERVERS / 2}.Felis.Test.:25565`;
  const url = `http://127.0.0.1:${port}${PREFIX}${encodeURIComponent(host)}`;
  return new Promise((resolve, reject) => {
    const child = spawn('node', [autocannonBin, '-j', '-c', String(CONNECTIONS), '-d', String(SECONDS), '-H', `Authorization=Bearer ${TOKEN}`, url], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`autocannon exited ${code}`))));
  });
}

// Rounds interleave the three targets so that load from elsewhere on the machine hits them alike;
// each target's best round counts. BENCH_ONLY=<n> measures only the n-th (for a CPU profile).
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const only = process.env.BENCH_ONLY === undefined ? undefined : Number(process.env.BENCH_ONLY);
const chosen = only === undefined ? targets : [targets[only]!];
const listening = [];
for (const target of chosen) {
  const l = await target.listen();
  const check = await fetch(`http://127.0.0.1:${l.port}${PREFIX}play7.felis.test`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  if (check.status !== 200) throw new Error(`${target.label}: warm-up answered ${check.status}`);
  await check.arrayBuffer();
  await load(l.port); // warm-up (JIT), not counted
  listening.push(l);
}
const results: Result[] = chosen.map((t) => ({ label: t.label, rps: 0, p50: 0, p99: 0, non2xx: 0 }));
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, l] of listening.entries()) {
    const r = await load(l.port);
    if (r.non2xx > 0) throw new Error(`${chosen[i]!.label}: ${r.non2xx} answers were not 2xx`);
    if (r.requests.average > results[i]!.rps) {
      results[i] = { label: chosen[i]!.label, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: 0 };
    }
  }
}
for (const l of listening) await l.close();

const runtime = isBun ? `Bun ${process.versions.bun}` : `Node ${process.versions.node}`;
console.log(`by-host over ${SERVERS} servers, ${runtime}, ${CONNECTIONS} connections, best of ${ROUNDS} interleaved rounds of ${SECONDS} s`);
if (only !== undefined) {
  console.log(results[0]);
  process.exit(0);
}
for (const r of results) {
  console.log(`${r.label.padEnd(20)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms`);
}
const [ours, hono, node] = results as [Result, Result, Result];
console.log(`ratio to the bare Hono route: ${(ours.rps / hono.rps).toFixed(2)} (target ≥ 0.80)`);
console.log(`ratio to bare node:http:      ${(ours.rps / node.rps).toFixed(2)}`);
cluster.stopTicking();
await database.close();
process.exit(0);
