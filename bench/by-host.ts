/**
 * `by-host` with 10,000 servers: the full internal app (request id, answer headers, cross-site
 * guard, token check, validation, metrics and the request's log line) against two baselines started
 * in the same run: a bare Hono route on the same cache and a bare node:http server. A fourth target,
 * "required work only", is the bare route plus by hand only what every answer must carry (see
 * bench/by-host-target.ts): the ceiling any implementation could reach on this machine.
 *
 *   npx tsx bench/by-host.ts            (Node, @hono/node-server)
 *   npx bun bench/by-host.ts            (Bun, Bun.serve)
 *
 * Each target runs alone in its own child process (bench/by-host-target.ts) on this runtime, and
 * the load generator (autocannon) in another, so no two share an event loop, a JIT or a heap.
 * BENCH_SECONDS (default 3), BENCH_CONNECTIONS (default 50) and BENCH_ROUNDS (default 8) tune a run;
 * BENCH_ONLY=full|hono|node|floor measures one target.
 *
 * BENCH_SIDE=1 loads every target at once, all on the one server CPU, each by its own load
 * generator: the scheduler shares that CPU between them, so each round's ratios meet the same
 * machine at the same moment. This machine's speed drifts by half within seconds, which the
 * default (targets one after the other) only pairs round by round; side by side, two identical
 * bare Hono targets measured 0.97–0.99 of each other in every round.
 *
 * BENCH_TARGETS=hono,full,native,plain weighs the service's home-made pieces instead
 * (docs/architecture.md): each listed target (see bench/by-host-target.ts) against the bare Hono
 * route, which must come first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { announcedPort, isBun } from './servers/announce.js';
import { BENCH_HOST, BENCH_TOKEN, BY_HOST_PREFIX, FLEET_SIZE } from './servers/by-host-fleet.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const SIDE = process.env.BENCH_SIDE === '1';
// The target of the same build as this bench: compiled (.js) or run by tsx (.ts).
const TARGET_SCRIPT = fileURLToPath(new URL(`./by-host-target${extname(import.meta.url)}`, import.meta.url));
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/**
 * With two or more CPUs and taskset at hand, the server under test runs on the last CPU and the load
 * generator on the others, so neither migrates onto the other's core mid-round (BENCH_PIN=0: off).
 */
const PIN = process.env.BENCH_PIN !== '0' && cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
const SERVER_CPU = String(cpus().length - 1);
const LOAD_CPUS = `0-${cpus().length - 2}`;
function pinned(cpu: string, command: string, args: string[]): [string, string[]] {
  return PIN ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
}

const LABELS: Record<string, string> = {
  full: 'felis internal app',
  hono: 'bare Hono route',
  node: 'bare node:http',
  floor: 'required work only',
  native: 'written the Hono way',
  plain: 'no Node fast paths',
};
const PIECES = process.env.BENCH_TARGETS?.split(',').map((role) => role.trim());
const TARGETS = (PIECES ?? ['full', 'hono', 'node', 'floor']).map((role) => {
  if (!LABELS[role]) throw new Error(`BENCH_TARGETS: unknown target ${role}`);
  return { role, label: LABELS[role] };
});
if (PIECES && PIECES[0] !== 'hono') throw new Error('BENCH_TARGETS must start with hono, the baseline');

interface Round {
  rps: number;
  p50: number;
  p99: number;
  /** The target process's CPU time (user + system, all threads) per request, in µs; NaN off Linux. */
  cpuUs: number;
}

interface Running {
  label: string;
  port: number;
  child: ChildProcess;
  rounds: Round[];
}

/** A target in its own process on this runtime (tsx's loader under Node), once it listens. */
async function start(role: string, label: string): Promise<Running> {
  const [command, args] = pinned(SERVER_CPU, process.execPath, [...process.execArgv, TARGET_SCRIPT, role]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await announcedPort(child, label);
  return { label, port, child, rounds: [] };
}

/**
 * CPU seconds a process has used so far (Linux /proc; NaN elsewhere). Per request it is steadier
 * than requests/s on a shared machine: it does not count time the process waited for a CPU.
 */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ ticks
  } catch {
    return Number.NaN;
  }
}

function load(port: number): Promise<Omit<Round, 'cpuUs'> & { total: number; non2xx: number }> {
  const url = `http://127.0.0.1:${port}${BY_HOST_PREFIX}${encodeURIComponent(BENCH_HOST)}`;
  return new Promise((resolve, reject) => {
    const [command, args] = pinned(LOAD_CPUS, 'node', [AUTOCANNON, '-j', '-c', String(CONNECTIONS), '-d', String(SECONDS), '-H', `Authorization=Bearer ${BENCH_TOKEN}`, url]);
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
      const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number };
      resolve({ rps: r.requests.average, total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx });
    });
  });
}

const chosen = process.env.BENCH_ONLY ? TARGETS.filter((t) => t.role === process.env.BENCH_ONLY) : TARGETS;
if (chosen.length === 0) throw new Error(`BENCH_ONLY must be one of ${TARGETS.map((t) => t.role).join(', ')}`);
const running: Running[] = [];
try {
  for (const { role, label } of chosen) {
    const target = await start(role, label);
    running.push(target);
    const check = await fetch(`http://127.0.0.1:${target.port}${BY_HOST_PREFIX}play7.felis.test`, { headers: { Authorization: `Bearer ${BENCH_TOKEN}` } });
    if (check.status !== 200) throw new Error(`${label}: warm-up answered ${check.status}`);
    await check.arrayBuffer();
    await load(target.port); // warm-up (JIT), not counted
  }
  // Each round measures every target back to back, in an order that alternates from round to
  // round, so that a pair of targets in one round met the same machine; or all at once (SIDE).
  const measure = async (target: Running): Promise<void> => {
    const cpuBefore = cpuSeconds(target.child.pid);
    const r = await load(target.port);
    const cpuUs = ((cpuSeconds(target.child.pid) - cpuBefore) * 1e6) / r.total;
    if (r.non2xx > 0) throw new Error(`${target.label}: ${r.non2xx} answers were not 2xx`);
    target.rounds.push({ rps: r.rps, p50: r.p50, p99: r.p99, cpuUs });
  };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? running : [...running].reverse();
    if (SIDE) await Promise.all(order.map(measure));
    else for (const target of order) await measure(target);
  }
} finally {
  for (const target of running) target.child.kill('SIGTERM');
}

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const best = (t: Running) => t.rounds.reduce((a, b) => (b.rps > a.rps ? b : a));

const runtime = isBun ? `Bun ${process.versions.bun}` : `Node ${process.versions.node}`;
console.log(`by-host over ${FLEET_SIZE} servers, ${runtime}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, targets interleaved`);
console.log(PIN ? `servers pinned to CPU ${SERVER_CPU}, load generator to ${LOAD_CPUS}` : 'not pinned to CPUs');
console.log(SIDE ? 'side by side: all targets loaded at once, sharing the server CPU' : 'one target at a time');
console.log(`load average after the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const t of running) {
  const top = best(t);
  const rps = t.rounds.map((r) => r.rps);
  console.log(
    `${t.label.padEnd(20)} median ${median(rps).toFixed(0).padStart(6)} req/s (best ${top.rps.toFixed(0)}, worst ${Math.min(...rps).toFixed(0)})   ` +
      `p50 ${top.p50} ms p99 ${top.p99} ms (best round)   CPU ${median(t.rounds.map((r) => r.cpuUs)).toFixed(1)} µs/request (median)`,
  );
}
// The headline: each round's two measurements met the same machine, so their ratio is the
// steadiest figure here; its median over the rounds, then the ratio of the best rounds.
const ratio = (a: Running, b: Running) => {
  const paired = a.rounds.map((r, i) => r.rps / b.rounds[i]!.rps);
  const byCpu = a.rounds.map((r, i) => b.rounds[i]!.cpuUs / r.cpuUs);
  return `${median(paired).toFixed(2)} (paired rounds, range ${Math.min(...paired).toFixed(2)}–${Math.max(...paired).toFixed(2)}), ${(best(a).rps / best(b).rps).toFixed(2)} best to best, ${median(byCpu).toFixed(2)} by CPU per request`;
};
if (PIECES && running.length === TARGETS.length) {
  const [hono, ...others] = running as [Running, ...Running[]];
  for (const target of others) console.log(`${`${target.label}, to the bare Hono route:`.padEnd(44)}${ratio(target, hono)}`);
} else if (running.length === TARGETS.length) {
  const [ours, hono, node, floor] = running as [Running, Running, Running, Running];
  console.log(`ratio to the bare Hono route:               ${ratio(ours, hono)}   target ≥ 0.80`);
  console.log(`ratio to bare node:http:                    ${ratio(ours, node)}`);
  console.log(`required work only, to the bare Hono route: ${ratio(floor, hono)}`);
  console.log(`ratio to the required work only:            ${ratio(ours, floor)}`);
}
