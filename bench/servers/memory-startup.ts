/**
 * Memory and start-up of the compiled service (issue 29), as a person starting it would see them:
 * `measureMemoryStartup` starts the service in a process of its own on each database and reads
 *
 * - first start: a fresh data folder (PGlite: the initdb runs) or a fresh PostgreSQL database, no
 *   servers; start to both faces healthy (internal `/readyz` 200 and external `/healthz` 200), then
 *   RSS and peak RSS (VmHWM) after `settleMs`;
 * - with N servers: the same data restarted with N simulated servers kept in the cluster's state
 *   file (PGlite: DATA_DIR/simulated-cluster.json, as `npm start` keeps them; PostgreSQL:
 *   bench/memory-startup-target.ts), the same figures;
 *
 * and, from the same run, the floors: a bare node process, the service's modules imported and
 * nothing started, the embedded database alone (its thread, socket and driver) on a fresh folder
 * and reopened. RSS is the whole process's (the embedded database's thread included).
 * bench/memory-startup.ts prints them; other benches import this function.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

export type BenchDatabase = 'pglite' | 'postgres';

export interface MemoryStartupOptions {
  /** Servers in the fleet for the second start (10,000). */
  servers?: number;
  /** Which databases (both). */
  databases?: BenchDatabase[];
  /** A PostgreSQL server URL; a database is made on it per run (BENCH_DATABASE_URL, else the local one). */
  postgresUrl?: string;
  /** How long a started process idles before its RSS is read (3,000 ms). */
  settleMs?: number;
  /** How long a start may take before the run fails (120,000 ms). */
  startTimeoutMs?: number;
  /** Node's flags for the service's process (default: those `npm start` gives, from package.json). */
  nodeArgs?: string[];
  /** Progress lines (stderr by default). */
  progress?: (line: string) => void;
}

export interface ProcessMemory {
  rss_mib: number;
  /** The most the process was resident at any time (VmHWM): an initdb's peak shows here. */
  peak_mib: number;
}

export interface Floor extends ProcessMemory {
  /** The process's start to its work done (node up; the modules imported; the database open). */
  ready_ms: number;
}

export interface StartFigures extends ProcessMemory {
  /** Spawn to both faces healthy. */
  start_ms: number;
  /**
   * The CPU the process used from spawn to healthy, every thread (the database's, V8's compile and
   * GC helpers) and the ended ones (a new folder's thread) included: on a loaded machine the wall
   * time is the machine's, this is the start's own cost.
   */
  start_cpu_ms: number;
}

export interface MemoryStartupFigures {
  servers: number;
  node_args: string[];
  settle_ms: number;
  baselines: {
    bare_node: Floor;
    service_modules: Floor;
    embedded_fresh: Floor;
    embedded_reopened: Floor;
  };
  databases: Array<{ database: BenchDatabase; first_start: StartFigures; with_servers: StartFigures }>;
}

/** The node flags of package.json's `start` script (`node <flags> dist/main.js`): the service as `npm start` runs it. */
export function startNodeArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { scripts: { start: string } };
  const words = scripts.start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'dist/main.js') throw new Error(`package.json start is not "node [flags] dist/main.js": ${scripts.start}`);
  return words.slice(1, -1);
}

const here = (file: string) => fileURLToPath(new URL(`${file}${extname(import.meta.url)}`, import.meta.url));
const MAIN = here('../../src/main');
const TARGET = here('../memory-startup-target');
const BASELINE = here('../memory-startup-baseline');

/** User and system CPU of the whole process so far, from /proc (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function memoryOf(pid: number): ProcessMemory {
  const lines = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n');
  const field = (name: string) => Math.round(Number(lines.find((l) => l.startsWith(`${name}:`))?.split(/\s+/)[1] ?? 0) / 1024);
  return { rss_mib: field('VmRSS'), peak_mib: field('VmHWM') };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answers200(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Starts `script` with `env`, waits for both faces healthy, settles, reads its memory, stops it. */
async function timedStart(script: string, env: Record<string, string>, o: Required<Pick<MemoryStartupOptions, 'settleMs' | 'startTimeoutMs' | 'nodeArgs'>>): Promise<StartFigures> {
  const [internal, external] = [await freePort(), await freePort()];
  const started = performance.now();
  const child = spawn(process.execPath, [...o.nodeArgs, script], {
    env: { ...process.env, ...env, HOST: '127.0.0.1', INTERNAL_PORT: String(internal), EXTERNAL_PORT: String(external), LOG_LEVEL: 'info', MAIL_TRANSPORT: 'none' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4_000)));
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${script} exited (${child.signalCode ?? child.exitCode}) before it was healthy: ${stderr}`);
      if (performance.now() - started > o.startTimeoutMs) throw new Error(`${script} not healthy after ${o.startTimeoutMs} ms: ${stderr}`);
      if ((await answers200(`http://127.0.0.1:${internal}/readyz`)) && (await answers200(`http://127.0.0.1:${external}/healthz`))) break;
      await sleep(20);
    }
    const start_ms = Math.round(performance.now() - started);
    const start_cpu_ms = cpuMsOf(child.pid!);
    await sleep(o.settleMs);
    return { start_ms, start_cpu_ms, ...memoryOf(child.pid!) };
  } finally {
    await stop(child);
  }
}

/** Runs a floor (bench/memory-startup-baseline.ts) and reads what it prints. */
async function baseline(args: string[], settleMs: number, nodeArgs: string[]): Promise<Floor> {
  const child = spawn(process.execPath, [...nodeArgs, BASELINE, ...args], { env: { ...process.env, BENCH_SETTLE_MS: String(settleMs) }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let pending = '';
      child.stdout!.on('data', (d: Buffer) => {
        pending += d.toString();
        if (pending.includes('\n')) resolve(pending.slice(0, pending.indexOf('\n')));
      });
      child.once('exit', (code) => reject(new Error(`baseline ${args.join(' ')} exited (${code})`)));
    });
    return JSON.parse(line) as Floor;
  } finally {
    await stop(child);
  }
}

/** N servers as the simulated cluster's state file keeps them (specs; phases are not kept). */
function writeFleet(file: string, servers: number): void {
  const specs = Array.from({ length: servers }, (_, i) => ({
    name: `s${i}`,
    subdomain: `play${i}`,
    memory: '4Gi',
    storage: '10Gi',
    cpu: '2',
    autostartPolicy: 'public',
    labels: {},
    desiredState: 'Stopped',
  }));
  writeFileSync(file, JSON.stringify({ servers: specs }));
}

async function withPostgresDatabase<T>(server: string, use: (url: string) => Promise<T>): Promise<T> {
  const name = `felis_bench_memory_${process.pid}_${Date.now()}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  try {
    const url = new URL(server);
    url.pathname = `/${name}`;
    return await use(url.toString());
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  }
}

export async function measureMemoryStartup(options: MemoryStartupOptions = {}): Promise<MemoryStartupFigures> {
  const servers = options.servers ?? 10_000;
  const settleMs = options.settleMs ?? 3_000;
  const timing = { settleMs, startTimeoutMs: options.startTimeoutMs ?? 120_000, nodeArgs: options.nodeArgs ?? startNodeArgs() };
  const progress = options.progress ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const postgresUrl = options.postgresUrl ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const work = mkdtempSync(join(tmpdir(), 'felis-bench-memory-'));
  try {
    progress('memory-startup: floors');
    const bare_node = await baseline(['bare'], settleMs, timing.nodeArgs);
    const service_modules = await baseline(['modules'], settleMs, timing.nodeArgs);
    const embeddedDir = join(work, 'embedded-alone');
    const embedded_fresh = await baseline(['embedded', embeddedDir], settleMs, timing.nodeArgs);
    const embedded_reopened = await baseline(['embedded', embeddedDir], settleMs, timing.nodeArgs);
    const databases: MemoryStartupFigures['databases'] = [];
    for (const database of options.databases ?? ['pglite', 'postgres']) {
      progress(`memory-startup: ${database}, first start, then ${servers} servers`);
      if (database === 'pglite') {
        const dataDir = join(work, 'pglite');
        const first_start = await timedStart(MAIN, { DATA_DIR: dataDir }, timing);
        writeFleet(join(dataDir, 'simulated-cluster.json'), servers);
        const with_servers = await timedStart(MAIN, { DATA_DIR: dataDir }, timing);
        databases.push({ database, first_start, with_servers });
      } else {
        const stateFile = join(work, 'postgres-fleet.json');
        const dataDir = join(work, 'postgres-data');
        databases.push(
          await withPostgresDatabase(postgresUrl, async (url) => {
            const env = { DATA_DIR: dataDir, DATABASE_URL: url, BENCH_STATE_FILE: stateFile };
            const first_start = await timedStart(TARGET, env, timing);
            writeFleet(stateFile, servers);
            const with_servers = await timedStart(TARGET, env, timing);
            return { database, first_start, with_servers };
          }),
        );
      }
    }
    return { servers, node_args: timing.nodeArgs, settle_ms: settleMs, baselines: { bare_node, service_modules, embedded_fresh, embedded_reopened }, databases };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
