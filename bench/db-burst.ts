/**
 * Does a burst of database work delay by-host? On the compiled output (`npm run bench:db-burst`):
 * each database path runs the full service (both faces, 10,000 servers, bench/db-burst-target.ts)
 * in its own process, and this process loads it:
 *
 * - quiet: by-host alone (10 connections);
 * - burst: by-host (10 connections) while GET /api/v1/me, a signed-in read that queries the
 *   database, runs at 50 connections on the external face of the same process.
 *
 * Paths: `inprocess` (the previous embedded default: PGlite in the service's own thread, no session
 * cache: the baseline of the same run), `thread` (the embedded default now: PGlite on its own
 * thread behind pglite-socket, postgres-js, session cache), and when BENCH_DATABASE_URL (or a
 * local PostgreSQL) answers, `postgres-nocache` (its baseline) and `postgres`.
 * Also printed: start to listening (open, migrate, fleet synced) and resident memory after the run.
 * BENCH_SECONDS (3), BENCH_ROUNDS (3), BENCH_SERVERS (10,000), BENCH_MODES (all) tune a run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { postgresAnswers } from './servers/postgres.js';
import { BENCH_HOST, BENCH_TOKEN, BY_HOST_PREFIX } from './servers/by-host-fleet.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET = fileURLToPath(new URL(`./db-burst-target${extname(import.meta.url)}`, import.meta.url));
const PANEL_HOST = 'panel.felis.test';

interface Target {
  child: ChildProcess;
  internal: number;
  external: number;
  cookie: string;
  start_ms: number;
}

function start(mode: string): Promise<Target> {
  const child = spawn(process.execPath, [TARGET, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stdout!.on('data', (d: Buffer) => {
      pending += d.toString();
      const newline = pending.indexOf('\n');
      if (newline >= 0) resolve({ child, ...(JSON.parse(pending.slice(0, newline)) as Omit<Target, 'child'>) });
    });
    child.once('exit', (code, signal) => reject(new Error(`${mode} target exited (${signal ?? code}) before it was listening`)));
  });
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string, connections: number, headers: Record<string, string>): Promise<Load> {
  const result = await autocannon({ url, connections, duration: SECONDS, headers });
  const errors = result.errors + result.timeouts + result.non2xx;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors };
}


const modes = process.env.BENCH_MODES?.split(',') ?? ['inprocess', 'thread', ...((await postgresAnswers()) ? ['postgres-nocache', 'postgres'] : [])];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: string[] = [];
for (const mode of modes) {
  const results: Array<{ quiet: Load; byHost: Load; me: Load; start: number; rss: number }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const target = await start(mode);
    try {
      const byHostUrl = `http://127.0.0.1:${target.internal}${BY_HOST_PREFIX}${encodeURIComponent(BENCH_HOST)}`;
      const proxy = { authorization: `Bearer ${BENCH_TOKEN}` };
      const quiet = await load(byHostUrl, 10, proxy);
      const [byHost, me] = await Promise.all([
        load(byHostUrl, 10, proxy),
        load(`http://127.0.0.1:${target.external}/api/v1/me`, 50, { cookie: target.cookie, host: PANEL_HOST }),
      ]);
      results.push({ quiet, byHost, me, start: target.start_ms, rss: rssMiB(target.child.pid!) });
    } finally {
      target.child.kill('SIGTERM');
      await new Promise((resolve) => target.child.once('exit', resolve));
    }
  }
  const m = (pick: (r: (typeof results)[number]) => number) => median(results.map(pick));
  rows.push(
    `| ${mode} | ${m((r) => r.start)} | ${m((r) => r.rss)} | ${m((r) => r.quiet.p50)} / ${m((r) => r.quiet.p99)} | ${m((r) => r.byHost.p50)} / ${m((r) => r.byHost.p99)} | ${Math.round(m((r) => r.byHost.rps))} of ${Math.round(m((r) => r.quiet.rps))} (${(m((r) => r.byHost.rps / r.quiet.rps)).toFixed(2)}) | ${Math.round(m((r) => r.me.rps))} | ${m((r) => r.me.p50)} / ${m((r) => r.me.p99)} | ${results.reduce((n, r) => n + r.quiet.errors + r.byHost.errors + r.me.errors, 0)} |`,
  );
  process.stderr.write(`${mode}: done\n`);
}
process.stdout.write(
  [
    `db-burst: ${ROUNDS} round(s) of ${SECONDS} s, ${process.env.BENCH_SERVERS ?? 10_000} servers, medians; latencies in ms`,
    '| database path | start ms | RSS MiB | by-host quiet p50 / p99 | by-host during /me burst p50 / p99 | by-host req/s burst of quiet | /me req/s | /me p50 / p99 | errors |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
