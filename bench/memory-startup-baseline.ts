/**
 * The floors of bench/servers/memory-startup.ts, each in its own process, which prints its RSS
 * (`{"rss_mib", "peak_mib", "ready_ms"}`) once settled and waits for SIGTERM:
 *
 *   memory-startup-baseline.js bare            a bare node process
 *   memory-startup-baseline.js embedded DIR    the embedded database alone on DIR as the service
 *                                              opens it (PGlite on its thread behind the socket,
 *                                              postgres-js), not migrated (a fresh DIR: initdb)
 *   memory-startup-baseline.js modules         the service's modules imported, nothing started
 */
import { readFileSync } from 'node:fs';

const what = process.argv[2];
let closeFirst = async (): Promise<void> => {};
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 2_000);

function status(field: string): number {
  const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

if (what === 'embedded') {
  const { sql } = await import('drizzle-orm');
  const { openEmbedded } = await import('../src/db/embedded.js');
  const database = await openEmbedded(process.argv[3]!);
  await database.db.execute(sql`select 1`);
  closeFirst = () => database.close();
} else if (what === 'modules') {
  await import('../src/service.js');
} else if (what !== 'bare') {
  process.stderr.write('usage: memory-startup-baseline.js bare|embedded DIR|modules\n');
  process.exit(2);
}
// From the process's start (performance's time origin) to what it had to do done: a floor of start-up.
const ready_ms = Math.round(performance.now());
await new Promise((resolve) => setTimeout(resolve, settleMs));
process.stdout.write(`${JSON.stringify({ rss_mib: status('VmRSS'), peak_mib: status('VmHWM'), ready_ms })}\n`);
process.once('SIGTERM', () => void closeFirst().finally(() => process.exit(0)));
setInterval(() => {}, 60_000);
