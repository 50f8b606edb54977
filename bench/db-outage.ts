/**
 * A database outage replayed under load, on the compiled service.
 *
 *   npx tsx bench/db-outage.ts [rate=40] [outageSeconds=30]
 *
 * A throw-away PostgreSQL (initdb in a temporary folder) sits behind a TCP relay; the service
 * (`node dist/main.js`, built first) runs in a child process on it. A signed-in GET /api/v1/me is sent
 * at a fixed rate, open loop, while the database is: up, stopped (fast shutdown), up again, silent
 * (the relay holds every byte, as a network dropping packets would), up again. Printed per second:
 * the answers by status and the slowest; then the goals: no answer slower than 5 s, no 500, only 503
 * while the database is away, and 200 again within 2 s of its return.
 */
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { openDatabase } from '../src/db/client.js';
import { users } from '../src/db/schema/accounts.js';
import { mintSession, SESSION_COOKIE } from '../src/features/accounts/sessions/session-service.js';
import { systemClock } from '../src/lib/clock.js';
import { cryptoRandom } from '../src/lib/random.js';
import { spawnService } from '../test/helpers/process.js';
import { TcpProxy } from '../test/helpers/tcp-proxy.js';
import { ThrowawayPostgres } from '../test/helpers/throwaway-postgres.js';

const RATE = Number(process.argv[2] ?? 40);
const OUTAGE_S = Number(process.argv[3] ?? 30);
const PANEL_HOST = 'panel.felis.test';

interface Sample {
  sentAt: number;
  status: number | 'none';
  ms: number;
}

function get(port: number, headers: Record<string, string>): Promise<{ status: number | 'none'; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/v1/me', headers, agent: false }, (res) => {
      res.resume().on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }));
    });
    req.setTimeout(30_000, () => req.destroy());
    req.on('error', () => resolve({ status: 'none', ms: performance.now() - started }));
    req.end();
  });
}

async function signedInCookie(url: string): Promise<string> {
  const database = await openDatabase({ url, dataDir: '' });
  try {
    const now = new Date();
    const [user] = await database.db
      .insert(users)
      .values({ username: 'bench_owner', role: 'user', createdAt: now, updatedAt: now })
      .returning({ id: users.id });
    const { token } = await mintSession({ clock: systemClock, random: cryptoRandom }, database.db, {
      userId: user!.id,
      host: PANEL_HOST,
      method: 'password',
    });
    return `${SESSION_COOKIE}=${token}`;
  } finally {
    await database.close();
  }
}

const pg = await ThrowawayPostgres.create();
const relay = await TcpProxy.start(pg.port);
const url = `postgres://postgres@127.0.0.1:${relay.port}/postgres`;
const cookie = await signedInCookie(url);
execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
const service = await spawnService(process.execPath, ['dist/main.js'], { DATABASE_URL: url, PANEL_HOST });

const samples: Sample[] = [];
const away: Array<{ from: number; to: number; kind: string }> = [];
const t0 = performance.now();
const now = () => (performance.now() - t0) / 1000;
const inflight: Array<Promise<void>> = [];
const driver = setInterval(() => {
  const sentAt = now();
  inflight.push(get(service.externalPort, { Cookie: cookie, Host: PANEL_HOST }).then((r) => void samples.push({ sentAt, ...r })));
}, 1000 / RATE);

const wait = (s: number) => new Promise((resolve) => setTimeout(resolve, s * 1000));
await wait(5);
let from = now();
await pg.stop();
await wait(OUTAGE_S);
await pg.start();
away.push({ from, to: now(), kind: 'stopped' });
await wait(10);
from = now();
relay.blackHole();
await wait(OUTAGE_S);
relay.restore();
away.push({ from, to: now(), kind: 'silent' });
await wait(10);
clearInterval(driver);
await Promise.all(inflight);
service.kill();
await relay.close();
await pg.destroy();

const bySecond = new Map<number, Sample[]>();
for (const s of samples) bySecond.set(Math.floor(s.sentAt), [...(bySecond.get(Math.floor(s.sentAt)) ?? []), s]);
console.log('second  database  answers by status            slowest ms');
for (const [second, group] of [...bySecond].sort((a, b) => a[0] - b[0])) {
  const state = away.find((a) => second >= Math.floor(a.from) && second < Math.ceil(a.to))?.kind ?? 'up';
  const counts = new Map<string, number>();
  for (const s of group) counts.set(String(s.status), (counts.get(String(s.status)) ?? 0) + 1);
  const statuses = [...counts].map(([k, v]) => `${k}×${v}`).join(' ');
  console.log(`${String(second).padStart(6)}  ${state.padEnd(8)}  ${statuses.padEnd(30)} ${Math.max(...group.map((s) => s.ms)).toFixed(0)}`);
}

const slowest = Math.max(...samples.map((s) => s.ms));
const failures = samples.filter((s) => s.status === 500 || s.status === 'none').length;
const inside = (s: Sample) => away.some((a) => s.sentAt >= a.from && s.sentAt + s.ms / 1000 <= a.to);
const wrongDuringOutage = samples.filter((s) => inside(s) && s.status !== 503).length;
const recoveries = away.map((a) => {
  const firstOk = samples.filter((s) => s.sentAt >= a.to && s.status === 200).sort((x, y) => x.sentAt - y.sentAt)[0];
  return firstOk ? (firstOk.sentAt + firstOk.ms / 1000 - a.to).toFixed(2) : 'never';
});
console.log(`\nrequests ${samples.length} at ${RATE}/s; slowest answer ${slowest.toFixed(0)} ms (goal < 5000)`);
console.log(`500s or no answer: ${failures} (goal 0); not 503 while the database was away: ${wrongDuringOutage} (goal 0)`);
console.log(`first 200 after the database returned: ${away.map((a, i) => `${a.kind} ${recoveries[i]} s`).join(', ')} (goal ≤ 2 s)`);
