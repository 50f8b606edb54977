import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
/**
 * Load bench: the full app's `/healthz` and a service-token route against two baselines started in
 * the same run (a bare node:http JSON server, a bare Hono route on the same adapter), under Node and
 * under Bun. Servers run in their own processes; the autocannon client runs here, on Node.
 *
 *   npm run bench                      # 5 s per target, 50 connections
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=100 npm run bench
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import autocannon from 'autocannon';
import { announcedPort } from './servers/announce.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP_SECONDS = 1;
const TOKEN = 'bench-proxy-token-0123456789';
const BUN = 'node_modules/.bin/bun';

type Runtime = 'node' | 'bun';
interface Target {
  name: string;
  server: string;
  path: string;
  headers?: Record<string, string>;
}
interface Figure {
  runtime: Runtime;
  target: string;
  rps: number;
  p50: number;
  p99: number;
}

const TARGETS: Target[] = [
  { name: 'bare node:http JSON', server: 'bare-node', path: '/' },
  { name: 'bare Hono route', server: 'bare-hono', path: '/healthz' },
  { name: 'felis /healthz (internal)', server: 'full', path: '/healthz' },
  {
    name: 'felis service-token route',
    server: 'full',
    path: '/api/v1/bench-only/service-token',
    headers: { Authorization: `Bearer ${TOKEN}` },
  },
];

/** Node runs the build this bench was run from (compiled .js, or .ts through tsx); Bun runs the sources. */
const EXT = extname(import.meta.url);
function command(runtime: Runtime, name: string): [string, string[]] {
  if (runtime === 'bun') return [BUN, [`bench/servers/${name}.ts`]];
  const script = fileURLToPath(new URL(`./servers/${name}${EXT}`, import.meta.url));
  return [process.execPath, EXT === '.js' ? [script] : ['--import', 'tsx', script]];
}

async function startServer(runtime: Runtime, name: string): Promise<{ child: ChildProcess; port: number }> {
  const [cmd, args] = command(runtime, name);
  const child = spawn(cmd, args, {
    env: { PATH: process.env.PATH, SERVICE_TOKEN_PROXY: TOKEN, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await announcedPort(child, `${runtime} ${name}`);
  return { child, port };
}

async function load(port: number, target: Target, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${port}${target.path}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: target.headers,
  });
}

async function measure(runtime: Runtime): Promise<Figure[]> {
  const servers = new Map<string, { child: ChildProcess; port: number }>();
  try {
    for (const name of new Set(TARGETS.map((t) => t.server))) servers.set(name, await startServer(runtime, name));
    const figures: Figure[] = [];
    for (const target of TARGETS) {
      const { port } = servers.get(target.server)!;
      await load(port, target, WARMUP_SECONDS);
      const result = await load(port, target, SECONDS);
      if (result.non2xx > 0 || result.errors > 0 || result.requests.total === 0) {
        throw new Error(`${runtime} ${target.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      }
      figures.push({ runtime, target: target.name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 });
      process.stderr.write(`  ${runtime.padEnd(4)} ${target.name}: ${Math.round(result.requests.average)} req/s\n`);
    }
    return figures;
  } finally {
    for (const { child } of servers.values()) child.kill('SIGKILL');
  }
}

function report(figures: Figure[]): string {
  const rows = [['runtime', 'target', 'req/s', 'p50 ms', 'p99 ms', 'vs node:http', 'vs bare Hono']];
  for (const f of figures) {
    const bareNode = figures.find((b) => b.runtime === f.runtime && b.target === TARGETS[0]!.name)!;
    const bareHono = figures.find((b) => b.runtime === f.runtime && b.target === TARGETS[1]!.name)!;
    rows.push([
      f.runtime,
      f.target,
      String(Math.round(f.rps)),
      String(f.p50),
      String(f.p99),
      (f.rps / bareNode.rps).toFixed(2),
      (f.rps / bareHono.rps).toFixed(2),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
}

const runtimes: Runtime[] = existsSync(BUN) ? ['node', 'bun'] : ['node'];
process.stderr.write(`bench: ${SECONDS} s per target after ${WARMUP_SECONDS} s warm-up, ${CONNECTIONS} connections\n`);
const figures: Figure[] = [];
for (const runtime of runtimes) figures.push(...(await measure(runtime)));
process.stdout.write(`\n${report(figures)}\n`);
