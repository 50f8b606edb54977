/**
 * Signed-in reads and memory, side by side, on the compiled output (`npm run bench:me`):
 *
 * - GET /api/v1/me on the external face against its floor (a bare Hono route parsing the same
 *   cookie and running the same one indexed query through the same driver), on PGlite and, when
 *   BENCH_DATABASE_URL (or a local PostgreSQL) answers, on PostgreSQL;
 * - the resident memory of the service idle and over a fleet of BENCH_SERVERS (10,000) servers.
 *
 * Each target runs in its own process; rounds alternate the order of the two targets, and the
 * headline is the median of per-round ratios (this machine's speed drifts between rounds).
 * BENCH_SECONDS (3), BENCH_CONNECTIONS (50), BENCH_ROUNDS (5) tune a run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { postgresAnswers } from './servers/postgres.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const script = (name: string) => fileURLToPath(new URL(`./${name}${extname(import.meta.url)}`, import.meta.url));

interface Target {
  label: string;
  child: ChildProcess;
  port: number;
  cookie?: string;
  rps: number[];
  p50: number[];
}

function start(label: string, file: string, args: string[], env: Record<string, string> = {}): Promise<Target> {
  const child = spawn(process.execPath, [...process.execArgv, script(file), ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stdout!.on('data', (d: Buffer) => {
      pending += d.toString();
      const newline = pending.indexOf('\n');
      if (newline < 0) return;
      const ready = JSON.parse(pending.slice(0, newline)) as { port: number; cookie?: string };
      resolve({ label, child, port: ready.port, cookie: ready.cookie, rps: [], p50: [] });
    });
    child.once('exit', (code) => reject(new Error(`${label} exited (${code}) before listening`)));
  });
}

/** Resident memory of a process in MiB (Linux). */
function rssMiB(pid: number | undefined): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

async function load(target: Target, path: string, headers: Record<string, string>): Promise<void> {
  const r = await autocannon({ url: `http://127.0.0.1:${target.port}${path}`, connections: CONNECTIONS, duration: SECONDS, headers });
  if (r.non2xx > 0) throw new Error(`${target.label}: ${r.non2xx} answers were not 2xx`);
  target.rps.push(r.requests.average);
  target.p50.push(r.latency.p50);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function mePair(kind: 'pglite' | 'postgres'): Promise<string> {
  const full = await start(`/me (${kind})`, 'me-target', ['full', kind]);
  const floor = await start(`floor (${kind})`, 'me-target', ['floor', kind]);
  try {
    const headers = (t: Target) => ({ Host: 'panel.felis.test', Cookie: t.cookie! });
    for (const t of [full, floor]) {
      await load(t, '/api/v1/me', headers(t)); // warm-up
      t.rps.length = 0;
      t.p50.length = 0;
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of round % 2 ? [floor, full] : [full, floor]) await load(t, '/api/v1/me', headers(t));
    }
  } finally {
    full.child.kill('SIGTERM');
    floor.child.kill('SIGTERM');
  }
  const ratios = full.rps.map((rps, i) => rps / floor.rps[i]!);
  return [full, floor]
    .map((t) => `${t.label.padEnd(18)} median ${median(t.rps).toFixed(0).padStart(6)} req/s   p50 ${median(t.p50)} ms`)
    .concat(`/me to its floor (${kind}): ${median(ratios).toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(' ')})   target ≥ 0.80`)
    .join('\n');
}


/** One target's resident memory once it has listened and settled for 3 s, alone on the machine. */
async function settledRss(servers: string | undefined): Promise<number> {
  const target = await start('memory', 'by-host-target', ['full'], servers === undefined ? {} : { BENCH_SERVERS: servers });
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const rss = rssMiB(target.child.pid);
  target.child.kill('SIGTERM');
  return rss;
}

async function memory(): Promise<string> {
  const idle = await settledRss('0');
  const fleet = await settledRss(undefined);
  return `RSS of the internal face: idle ${idle.toFixed(0)} MiB, over ${process.env.BENCH_SERVERS ?? 10_000} servers ${fleet.toFixed(0)} MiB`;
}

console.log(`Node ${process.versions.node}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, compiled: ${extname(import.meta.url) === '.js'}`);
console.log(await mePair('pglite'));
if (await postgresAnswers()) console.log(await mePair('postgres'));
else console.log('PostgreSQL: not reachable (set BENCH_DATABASE_URL)');
console.log(await memory());
