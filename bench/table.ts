/**
 * `npm run bench:table`: every row of issue 29's table, on both databases, side by side with its
 * baseline of the same run, as a markdown table on stdout (progress on stderr):
 *
 *   GET /api/v1/me (signed in) · by-host, internal status, menu and menu-access over 1,000 / 10,000 /
 *   100,000 servers · healthz · hasJoined · RSS idle, first start · RSS with 10,000 servers · start to both faces healthy
 *
 * Each database runs the service (bench/table-target.ts `felis`: both faces as main.ts assembles
 * them) in its own process per fleet size: PGlite embedded on its thread in a fresh data folder,
 * as `npm start` runs it, and PostgreSQL on a fresh database of its own on BENCH_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test; its rows are left out when it does not answer).
 * The baseline (`bare`) is bare Hono routes over the same fleet in another process: by-host,
 * status and menu look the server up in the same cache (menu-access makes one pass over it), /me
 * and healthz are measured against `/healthz`,
 * hasJoined against a bare Hono hasJoined that makes the same outbound GET to the same stand-in
 * identity source (a third process, `table-target source`, answering at once), so its ratio is
 * what our verifier costs beyond the source's round trip.
 * Rounds alternate which of the pair is loaded first; a ratio is the median of the rounds' ratios
 * (this machine's speed drifts between rounds). Memory and start-up: bench/servers/memory-startup.ts.
 *
 *   npm run bench:table                    3 rounds of 3 s per row, 50 connections
 *   npm run bench:table -- --quick         1 round of 2 s per row
 *   BENCH_DATABASES=pglite npm run bench:table
 *
 * BENCH_ROUNDS, BENCH_SECONDS, BENCH_CONNECTIONS and BENCH_SIZES (1000,10000,100000) tune a run;
 * BENCH_ROWS (me,by-host,status,menu,menu-access,healthz,hasJoined,memory; default all) measures only those rows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { BENCH_TOKEN, BY_HOST_PREFIX } from './servers/by-host-fleet.js';
import { measureMemoryStartup, startNodeArgs } from './servers/memory-startup.js';
import { postgresAnswers } from './servers/postgres.js';

const QUICK = process.argv.includes('--quick');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 2 : 3));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
/** The fleet size of the /me, healthz, hasJoined and memory rows (the issue's). */
const FLEET = 10_000;
/** The menu-access rows' connections (each answer lists the whole fleet). */
const MENU_ACCESS_CONNECTIONS = Math.min(CONNECTIONS, 5);
/** The player of the menu-access row: no account is linked to it. */
const MENU_PLAYER = '0f0e0d0c-0b0a-4908-8706-050403020100';
process.env.BENCH_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const SETTLE_MS = 2_000;
const ROWS = process.env.BENCH_ROWS?.split(',');
const wanted = (row: string) => ROWS === undefined || ROWS.includes(row);

type Kind = 'pglite' | 'postgres';
const KIND_LABEL: Record<Kind, string> = { pglite: 'PGlite (embedded, its thread)', postgres: 'PostgreSQL' };
const TARGET = fileURLToPath(new URL(`./table-target${extname(import.meta.url)}`, import.meta.url));

interface Target {
  child: ChildProcess;
  internal: number;
  external?: number;
  cookie?: string;
  /** The signed-in user's API key (issue 42). */
  apiKey?: string;
  /** From spawn to listening (bare) or to both faces answering healthy (felis), in ms. */
  startMs: number;
}

const say = (text: string) => process.stderr.write(`${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** A target once it announced its ports and, for felis, once /readyz (internal) and /healthz (external) answer 200. */
async function start(args: string[], env: Record<string, string> = {}): Promise<Target> {
  const started = performance.now();
  // Every target with `npm start`'s node flags (--liftoff-only among them: without it, V8's
  // tier-up compile of PGlite's WebAssembly burned CPU on helper threads for the first half-minute,
  // which the first rows after each start paid in their CPU figures).
  const child = spawn(process.execPath, [...process.execArgv, ...startNodeArgs(), TARGET, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const ready = await new Promise<{ internal: number; external?: number; cookie?: string; apiKey?: string }>((resolve, reject) => {
    let pending = '';
    child.stdout!.on('data', (d: Buffer) => {
      pending += d.toString();
      const newline = pending.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(pending.slice(0, newline)));
    });
    child.once('exit', (code) => reject(new Error(`table-target ${args.join(' ')} exited (${code}) before listening`)));
  });
  if (ready.external !== undefined) {
    while (!(await answers(`http://127.0.0.1:${ready.internal}/readyz`)) || !(await answers(`http://127.0.0.1:${ready.external}/healthz`))) await sleep(20);
  }
  return { child, ...ready, startMs: performance.now() - started };
}

function stop(target: Target): Promise<void> {
  return new Promise((resolve) => {
    if (target.child.exitCode !== null) return resolve();
    const force = setTimeout(() => target.child.kill('SIGKILL'), 10_000);
    target.child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    target.child.kill('SIGTERM');
  });
}

interface Load {
  pid: number | undefined;
  port: number;
  path: string;
  headers: Record<string, string>;
  /** Connections of this load, when not BENCH_CONNECTIONS. */
  connections?: number;
}

interface Figure {
  rps: number;
  p99: number;
  /** The target's CPU time (user + system, every thread) per request, in µs: steadier than req/s on a shared machine. */
  cpuUs: number;
}

/** CPU seconds a process has used so far (Linux /proc). */
function cpuSeconds(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ ticks
}

async function load({ pid, port, path, headers, connections = CONNECTIONS }: Load, seconds = SECONDS, warmUp = false): Promise<Figure> {
  const cpuBefore = cpuSeconds(pid);
  const r = await autocannon({ url: `http://127.0.0.1:${port}${path}`, connections, duration: seconds, headers });
  // A warm-up may end before its first answers on a busy machine; a measured round may not.
  if (r.non2xx > 0 || r.errors > 0 || (!warmUp && r.requests.total === 0)) throw new Error(`${path}: ${r.non2xx} answers were not 2xx, ${r.errors} errors, ${r.requests.total} answers`);
  return { rps: r.requests.average, p99: r.latency.p99, cpuUs: ((cpuSeconds(pid) - cpuBefore) * 1e6) / r.requests.total };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

interface Pair {
  felis: Figure;
  base: Figure;
  ratio: number;
  /** The baseline's CPU per request over ours, median of the rounds. */
  cpuRatio: number;
}

/** The two loads in paired rounds, after a warm-up of each: medians, and the median of the rounds' ratios. */
async function pair(label: string, felis: Load, base: Load): Promise<Pair> {
  await load(felis, 1, true);
  await load(base, 1, true);
  const ours: Figure[] = [];
  const theirs: Figure[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      ours.push(await load(felis));
      theirs.push(await load(base));
    } else {
      theirs.push(await load(base));
      ours.push(await load(felis));
    }
  }
  const result: Pair = {
    felis: { rps: median(ours.map((f) => f.rps)), p99: median(ours.map((f) => f.p99)), cpuUs: median(ours.map((f) => f.cpuUs)) },
    base: { rps: median(theirs.map((f) => f.rps)), p99: median(theirs.map((f) => f.p99)), cpuUs: median(theirs.map((f) => f.cpuUs)) },
    ratio: median(ours.map((f, i) => f.rps / theirs[i]!.rps)),
    cpuRatio: median(ours.map((f, i) => theirs[i]!.cpuUs / f.cpuUs)),
  };
  say(`  ${label}: ${result.felis.rps.toFixed(0)} req/s against ${result.base.rps.toFixed(0)}, ${result.ratio.toFixed(2)}; by CPU ${result.cpuRatio.toFixed(2)}`);
  return result;
}

interface MemoryStartup {
  /** The service with no servers on fresh data: ms from spawn to both faces healthy, RSS settled. */
  first_start: { start_ms: number; rss_mib: number };
  /** The same data restarted with FLEET servers. */
  with_servers: { start_ms: number; rss_mib: number; peak_mib: number };
  /** The floors of the same run: a bare node process (RSS), the service's modules imported and nothing started (ms). */
  baseline: { start_ms: number; rss_mib: number };
}

/**
 * Memory and start-up of the compiled service on each database as `npm start` runs it
 * (bench/servers/memory-startup.ts, `npm run bench:memory`, which also prints the embedded
 * database's own floors).
 */
async function memoryStartup(kinds: Kind[]): Promise<Map<Kind, MemoryStartup>> {
  const figures = await measureMemoryStartup({ servers: FLEET, databases: kinds, settleMs: SETTLE_MS, progress: say });
  const floor = { start_ms: figures.baselines.service_modules.ready_ms, rss_mib: figures.baselines.bare_node.rss_mib };
  return new Map(figures.databases.map((d) => [d.database, { first_start: d.first_start, with_servers: d.with_servers, baseline: floor }]));
}

interface KindFigures {
  me?: Pair;
  meKey?: Pair;
  byHost: Map<number, Pair>;
  status: Map<number, Pair>;
  menu: Map<number, Pair>;
  menuAccess: Map<number, Pair>;
  healthz?: Pair;
  hasJoined?: Pair;
  memory?: MemoryStartup;
}

async function measure(kind: Kind): Promise<KindFigures> {
  const figures: KindFigures = { byHost: new Map(), status: new Map(), menu: new Map(), menuAccess: new Map() };
  const source = await start(['source']);
  const withSource = { BENCH_SESSION_SOURCE: `http://127.0.0.1:${source.internal}` };
  try {
    for (const size of SIZES) await measureFleet(kind, size, figures, withSource);
  } finally {
    await stop(source);
  }
  return figures;
}

async function measureFleet(kind: Kind, size: number, figures: KindFigures, env: Record<string, string>): Promise<void> {
  say(`${KIND_LABEL[kind]}, ${size} servers: starting`);
  const bare = await start(['bare', String(size)], env);
  const felis = await start(['felis', kind, String(size)], env);
  try {
    const proxy = { Authorization: `Bearer ${BENCH_TOKEN}` };
    const [ours, theirs] = [{ pid: felis.child.pid, port: felis.internal }, { pid: bare.child.pid, port: bare.internal }];
    const middle = Math.floor(size / 2);
    const byHostPath = `${BY_HOST_PREFIX}${encodeURIComponent(`PLAY${middle}.Felis.Test.:25565`)}`;
    if (wanted('by-host')) figures.byHost.set(size, await pair(`by-host ${size}`, { ...ours, path: byHostPath, headers: proxy }, { ...theirs, path: byHostPath, headers: proxy }));
    const statusPath = `/api/v1/internal/servers/s${middle}/status`;
    if (wanted('status')) figures.status.set(size, await pair(`internal status ${size}`, { ...ours, path: statusPath, headers: proxy }, { ...theirs, path: statusPath, headers: proxy }));
    const menuPath = `/api/v1/internal/servers/s${middle}/menu`;
    if (wanted('menu')) figures.menu.set(size, await pair(`menu ${size}`, { ...ours, path: menuPath, headers: proxy }, { ...theirs, path: menuPath, headers: proxy }));
    // A player with no account (the lobby's usual visitor): every tile by its policy. Fewer
    // connections: each answer is made whole before it is written (1.4 MB at 100,000 servers),
    // so 50 at once finished none within a round on either side.
    const menuAccessPath = `/api/v1/internal/player/menu-access/${MENU_PLAYER}`;
    const few = { headers: proxy, path: menuAccessPath, connections: MENU_ACCESS_CONNECTIONS };
    if (wanted('menu-access')) figures.menuAccess.set(size, await pair(`menu-access ${size}`, { ...ours, ...few }, { ...theirs, ...few }));
    if (size !== FLEET) return;
    if (wanted('healthz')) figures.healthz = await pair('healthz', { ...ours, path: '/healthz', headers: {} }, { ...theirs, path: '/healthz', headers: {} });
    const me = { Host: 'panel.felis.test', Cookie: felis.cookie! };
    if (wanted('me')) figures.me = await pair('/me', { ...ours, port: felis.external!, path: '/api/v1/me', headers: me }, { ...theirs, path: '/healthz', headers: {} });
    const withKey = { Host: 'panel.felis.test', Authorization: `Bearer ${felis.apiKey!}` };
    if (wanted('me')) figures.meKey = await pair('/me with a key', { ...ours, port: felis.external!, path: '/api/v1/me', headers: withKey }, { ...theirs, path: '/healthz', headers: {} });
    const hasJoinedPath = `/session/minecraft/hasJoined?username=Bench_Player&serverId=${'5f'.repeat(20)}&ip=203.0.113.7`;
    if (wanted('hasJoined')) figures.hasJoined = await pair('hasJoined', { ...ours, path: hasJoinedPath, headers: {} }, { ...theirs, path: hasJoinedPath, headers: {} });
  } finally {
    await stop(felis);
    await stop(bare);
  }
}

const kinds: Kind[] = (process.env.BENCH_DATABASES?.split(',') as Kind[] | undefined) ?? ['pglite', 'postgres'];
const measured = new Map<Kind, KindFigures>();
for (const kind of kinds) {
  if (kind === 'postgres' && !(await postgresAnswers())) {
    say(`PostgreSQL at ${process.env.BENCH_DATABASE_URL} does not answer: its rows are left out`);
    continue;
  }
  measured.set(kind, await measure(kind));
}
if (wanted('memory')) for (const [kind, memory] of await memoryStartup([...measured.keys()])) measured.get(kind)!.memory = memory;

const n = (value: number) => Math.round(value).toLocaleString('en-US');
const rate = (p: Pair | undefined) => (p ? `${n(p.felis.rps)} req/s, p99 ${p.felis.p99} ms, ${p.felis.cpuUs.toFixed(0)} µs CPU` : '—');
const baseRate = (p: Pair | undefined) => (p ? `${n(p.base.rps)} req/s, ${p.base.cpuUs.toFixed(0)} µs CPU` : '—');
const ratio = (p: Pair | undefined) => (p ? `**${p.ratio.toFixed(2)}** (CPU ${p.cpuRatio.toFixed(2)})` : '—');
const used = [...measured.keys()];
const header = ['figure', ...used.flatMap((k) => [`${KIND_LABEL[k]}`, 'baseline', 'ratio']), 'goal'];
const rows: string[][] = [];
const throughput = (figure: string, pick: (f: KindFigures) => Pair | undefined, goal: string) =>
  rows.push([figure, ...used.flatMap((k) => [rate(pick(measured.get(k)!)), baseRate(pick(measured.get(k)!)), ratio(pick(measured.get(k)!))]), goal]);
const memoryRow = (figure: string, pick: (m: MemoryStartup) => [number, number], unit: string, goal: string) =>
  rows.push([
    figure,
    ...used.flatMap((k) => {
      const m = measured.get(k)!.memory;
      if (!m) return ['—', '—', '—'];
      const [ours, base] = pick(m);
      return [`${n(ours)} ${unit}`, `${n(base)} ${unit}`, `${(ours / base).toFixed(1)}×`];
    }),
    goal,
  ]);

throughput('`GET /api/v1/me` (signed in; baseline: bare `/healthz`)', (f) => f.me, '≥ 0.5 on both databases; p99 < 50 ms');
throughput('`GET /api/v1/me` with an API key (baseline: bare `/healthz`)', (f) => f.meKey, 'no lower than the cookie row');
for (const size of SIZES) throughput(`by-host, ${n(size)} servers (baseline: bare by-host)`, (f) => f.byHost.get(size), '≥ 0.7, flat from 1,000 to 100,000 servers');
for (const size of SIZES) throughput(`internal status, ${n(size)} servers (baseline: bare status)`, (f) => f.status.get(size), '≥ 0.7, flat from 1,000 to 100,000 servers');
for (const size of SIZES) throughput(`menu, ${n(size)} servers (baseline: bare menu)`, (f) => f.menu.get(size), '≥ 0.7, flat from 1,000 to 100,000 servers');
for (const size of SIZES) throughput(`menu-access, ${n(size)} servers, a player with no account, ${MENU_ACCESS_CONNECTIONS} connections (baseline: bare menu-access)`, (f) => f.menuAccess.get(size), '≥ 0.7, flat from 1,000 to 100,000 servers');
throughput('healthz (baseline: bare `/healthz`)', (f) => f.healthz, '≥ 0.7');
throughput('hasJoined, the source answering at once (baseline: bare Hono making the same call to the same source)', (f) => f.hasJoined, '≥ 0.7');
memoryRow('RSS idle, first start (baseline: bare node process)', (m) => [m.first_start.rss_mib, m.baseline.rss_mib], 'MiB', '< 150 MiB PostgreSQL, < 300 MiB PGlite');
memoryRow(`RSS with ${n(FLEET)} servers (baseline: bare node process)`, (m) => [m.with_servers.rss_mib, m.baseline.rss_mib], 'MiB', '< 250 MiB PostgreSQL, < 400 MiB PGlite');
memoryRow(`peak RSS with ${n(FLEET)} servers, start included (VmHWM; baseline: bare node process)`, (m) => [m.with_servers.peak_mib, m.baseline.rss_mib], 'MiB', 'a container limit must allow it (no goal)');
memoryRow(`start to both faces healthy, ${n(FLEET)} servers (baseline: importing the service's modules alone)`, (m) => [m.with_servers.start_ms, m.baseline.start_ms], 'ms', '< 2 s PostgreSQL, < 3 s PGlite');

const lines = [
  `Node ${process.versions.node}, ${cpus().length} CPUs, ${CONNECTIONS} connections, ${ROUNDS} round(s) of ${SECONDS} s per row${QUICK ? ' (quick)' : ''}, compiled: ${extname(import.meta.url) === '.js'}; load average after the run ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  '',
  `| ${header.join(' | ')} |`,
  `|${header.map(() => '---').join('|')}|`,
  ...rows.map((row) => `| ${row.join(' | ')} |`),
  '',
  'Ratios: req/s of the service over the baseline, median of paired rounds; in brackets, the baseline\'s CPU time per request over the service\'s (every thread of the process), steadier on a shared machine.',
  'Memory and start-up rows: the compiled service as `npm start` runs it (bench/servers/memory-startup.ts; `npm run bench:memory` adds the embedded database\'s own floors).',
];
process.stdout.write(`${lines.join('\n')}\n`);
