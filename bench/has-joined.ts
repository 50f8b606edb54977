/**
 * Added latency of hasJoined over the slowest session source it needs.
 *
 *   npx tsx bench/has-joined.ts [requests=2000] [delayMs=20]
 *   (BENCH_DATABASE_URL=postgres://… to run the app on PostgreSQL instead of an embedded PGlite)
 *
 * Stand-in session servers answer after a fixed delay. Each round sends one request straight to the
 * needed stand-in and one through the full internal app (real server, embedded database for the
 * bar list, keep-alive clients). The stand-ins record how long they held each request (timer
 * jitter), which is taken out of both sides, so:
 *
 *   added = (app total - hold of the slowest needed source) - (direct total - its hold)
 *
 * Scenarios: the primary validates; the primary says no (slow) and a fast secondary validates (its
 * early success waits for the primary, then its name is looked up, cached after the first).
 */
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.js';
import { startService } from '../src/server.js';
import { createLogger } from '../src/lib/logger.js';

const N = Number(process.argv[2] ?? 2000);
const DELAY_MS = Number(process.argv[3] ?? 20);
const WARMUP = 200;

interface StandIn {
  url: string;
  /** serverId → ms the stand-in held the request. */
  held: Map<string, number>;
  server: Server;
}

async function standIn(delayMs: number, answer: 'profile' | 'none', id: string): Promise<StandIn> {
  const held = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/users/profiles/minecraft/')) return void res.writeHead(404).end();
    const started = performance.now();
    setTimeout(() => {
      held.set(url.searchParams.get('serverId') ?? '', performance.now() - started);
      if (answer === 'none') return void res.writeHead(204).end();
      const body = JSON.stringify({
        id,
        name: url.searchParams.get('username'),
        properties: [{ name: 'textures', value: 'e30=', signature: 'c2ln' }],
      });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
    }, delayMs);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, held, server };
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0 }));
    })
      .on('error', reject)
      .end();
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function scenario(name: string, sources: Array<{ standIn: StandIn; primary?: boolean }>, needed: StandIn) {
  const config = loadConfig({
    INTERNAL_PORT: '0',
    EXTERNAL_PORT: '0',
    DATABASE_URL: process.env.BENCH_DATABASE_URL || 'memory:',
    LOG_LEVEL: 'silent',
    SESSION_SOURCES: JSON.stringify(
      sources.map((s, i) => ({
        name: i === 0 ? 'mojang' : `third${i}`,
        url: s.standIn.url,
        ...(s.primary ? { primary: true, profile_url: s.standIn.url } : { prefix: 'TP' }),
      })),
    ),
  });
  const service = await startService(config, createLogger('silent'));
  const app = `http://127.0.0.1:${service.internal.port}/session/minecraft/hasJoined`;
  const added: number[] = [];
  try {
    for (let i = 0; i < N + WARMUP; i += 1) {
      const directId = `d${i}`;
      const viaId = `v${i}`;
      const direct = await get(`${needed.url}/session/minecraft/hasJoined?username=Bench&serverId=${directId}`);
      const via = await get(`${app}?username=Bench&serverId=${viaId}&ip=127.0.0.1`);
      if (via.status !== 200) throw new Error(`${name}: hasJoined answered ${via.status}`);
      if (i < WARMUP) continue;
      const viaHeld = Math.max(...sources.map((s) => s.standIn.held.get(viaId) ?? 0));
      added.push(via.ms - viaHeld - (direct.ms - needed.held.get(directId)!));
    }
  } finally {
    await service.stop();
  }
  report(name, added);
}

/**
 * The floor: a bare node:http server that forwards to the source with the same kind of keep-alive
 * client and copies the answer. Whatever it adds is the extra loopback hop itself, on this machine,
 * in this run.
 */
async function bareForwarder(name: string, source: StandIn) {
  const upstream = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    request(`${source.url}${req.url ?? '/'}`, { agent: upstream }, (up) => {
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('end', () => res.writeHead(up.statusCode ?? 502, { 'Content-Type': 'application/json' }).end(Buffer.concat(chunks)));
    }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const added: number[] = [];
  for (let i = 0; i < N + WARMUP; i += 1) {
    const direct = await get(`${source.url}/session/minecraft/hasJoined?username=Bench&serverId=fd${i}`);
    const via = await get(`http://127.0.0.1:${port}/session/minecraft/hasJoined?username=Bench&serverId=fv${i}`);
    if (i < WARMUP) continue;
    added.push(via.ms - source.held.get(`fv${i}`)! - (direct.ms - source.held.get(`fd${i}`)!));
  }
  server.closeAllConnections();
  server.close();
  upstream.destroy();
  report(name, added);
}

function report(name: string, added: number[]) {
  added.sort((a, b) => a - b);
  const f = (v: number) => `${v.toFixed(3)} ms`;
  console.log(
    `${name.padEnd(50)} n=${added.length}  added p50 ${f(percentile(added, 50))}  p90 ${f(percentile(added, 90))}  p99 ${f(percentile(added, 99))}  max ${f(added.at(-1)!)}`,
  );
}

const NOTCH = '069a79f444e94726a5befca90e38aaf5';
const primaryYes = await standIn(DELAY_MS, 'profile', NOTCH);
const primaryNo = await standIn(DELAY_MS, 'none', NOTCH);
const fastThird = await standIn(Math.max(1, Math.round(DELAY_MS / 4)), 'profile', NOTCH);
console.log(`hasJoined added latency, ${N} sequential requests after ${WARMUP} warm-up, source delay ${DELAY_MS} ms, node ${process.version}`);
await bareForwarder('floor: bare node:http forwarder (1 source)', primaryYes);
await scenario('primary validates (1 source)', [{ standIn: primaryYes, primary: true }], primaryYes);
await scenario('slow primary says no, fast secondary validates', [{ standIn: primaryNo, primary: true }, { standIn: fastThird }], primaryNo);
agent.destroy();
for (const s of [primaryYes, primaryNo, fastThird]) {
  s.server.closeAllConnections();
  s.server.close();
}
