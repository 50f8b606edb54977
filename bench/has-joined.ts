/**
 * Added latency of hasJoined over the slowest session source it needs.
 *
 *   npx tsx bench/has-joined.ts [requests=2000] [delayMs=20]
 *   (BENCH_DATABASE_URL=postgres://… to run the app on PostgreSQL instead of an embedded PGlite;
 *    BENCH_LOG_LEVEL=info to measure with the per-request log line on, written to /dev/null)
 *
 * Stand-in session servers answer after a fixed delay. Each round sends one request straight to the
 * needed stand-in and one through the server under test (keep-alive clients, one request at a time).
 * The stand-ins record how long they held each request (timer jitter), which is taken out of both
 * sides, so:
 *
 *   added = (via total - hold of the slowest needed source) - (direct total - its hold)
 *
 * Process layout: this process runs the stand-ins and the client; the server under test runs alone
 * in a child (bench/has-joined-target.ts), one child per scenario. When all of them shared one event
 * loop, the figures mostly measured their interference with each other (the bare forwarder alone
 * showed a p99 of about 1.6 ms), not the server.
 *
 * Scenarios: the floor, a bare node:http forwarder (the cost of the extra loopback hop itself); the
 * full internal app (real server, embedded database for the bar list) where the primary validates;
 * and where the primary says no (slow) and a fast secondary validates (its early success waits for
 * the primary, then its name is looked up, cached after the first).
 */
import { spawn } from 'node:child_process';
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { announcedPort } from './servers/announce.js';

const N = Number(process.argv[2] ?? 2000);
const DELAY_MS = Number(process.argv[3] ?? 20);
const WARMUP = 200;
const TARGET_SCRIPT = fileURLToPath(new URL(`./has-joined-target${extname(import.meta.url)}`, import.meta.url));

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

interface Target {
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts bench/has-joined-target.ts with this process's own node flags (under `npx tsx` they carry
 * tsx's loader) and waits for its {"port": N} line.
 */
async function startTarget(args: string[]): Promise<Target> {
  const child = spawn(process.execPath, [...process.execArgv, TARGET_SCRIPT, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const port = await announcedPort(child, `target ${args[0]}`);
  return {
    port,
    stop: async () => {
      child.kill('SIGTERM');
      const { code, signal } = await exited;
      if (code !== 0) throw new Error(`target ${args[0]} exited (${signal ?? code}) on SIGTERM`);
    },
  };
}

/**
 * `sources` are the stand-ins the via request may touch; `needed` is the one the direct request
 * goes to.
 */
async function measure(name: string, targetArgs: string[], sources: StandIn[], needed: StandIn) {
  // serverIds restart at d0/v0 in every scenario: a hold left from an earlier one must not count.
  for (const s of sources) s.held.clear();
  const target = await startTarget(targetArgs);
  const via = `http://127.0.0.1:${target.port}/session/minecraft/hasJoined`;
  const added: number[] = [];
  try {
    for (let i = 0; i < N + WARMUP; i += 1) {
      const directId = `d${i}`;
      const viaId = `v${i}`;
      const direct = await get(`${needed.url}/session/minecraft/hasJoined?username=Bench&serverId=${directId}`);
      const through = await get(`${via}?username=Bench&serverId=${viaId}&ip=127.0.0.1`);
      if (through.status !== 200) throw new Error(`${name}: hasJoined answered ${through.status}`);
      if (i < WARMUP) continue;
      const viaHeld = Math.max(...sources.map((s) => s.held.get(viaId) ?? 0));
      added.push(through.ms - viaHeld - (direct.ms - needed.held.get(directId)!));
    }
  } finally {
    await target.stop();
  }
  report(name, added);
}

function sessionSources(sources: Array<{ standIn: StandIn; primary?: boolean }>): string {
  return JSON.stringify(
    sources.map((s, i) => ({
      name: i === 0 ? 'mojang' : `third${i}`,
      url: s.standIn.url,
      ...(s.primary ? { primary: true, profile_url: s.standIn.url } : { prefix: 'TP' }),
    })),
  );
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
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1/5/15 min) on ${availableParallelism()} CPUs`);
try {
  await measure('floor: bare node:http forwarder (1 source)', ['floor', primaryYes.url], [primaryYes], primaryYes);
  await measure('primary validates (1 source)', ['service', sessionSources([{ standIn: primaryYes, primary: true }])], [primaryYes], primaryYes);
  await measure(
    'slow primary says no, fast secondary validates',
    ['service', sessionSources([{ standIn: primaryNo, primary: true }, { standIn: fastThird }])],
    [primaryNo, fastThird],
    primaryNo,
  );
} finally {
  agent.destroy();
  for (const s of [primaryYes, primaryNo, fastThird]) {
    s.server.closeAllConnections();
    s.server.close();
  }
}
