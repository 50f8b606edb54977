/**
 * A large world (default 1 GiB: BENCH_WORLD_MIB) backed up and restored through the compiled
 * service (`node dist/main.js` on the simulated cluster, whose worlds are folders under DATA_DIR),
 * driven over HTTP as the panel does: POST backup, poll the jobs, POST restore-backup, poll again.
 * The service's resident memory is sampled from /proc while it works.
 *
 * Baseline, in the same process tree on the same folder: `tar | gzip -1 | sha256sum` writing the
 * archive and then re-hashing it (what a backup does: archive, store, read back), and
 * `gzip -dc | tar -x` with a hash on the way (what a restore does). The ratio service/baseline is
 * the figure; the baseline is the floor these disks and this CPU allow.
 *
 *   npm run bench:worlds
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/client.js';
import { users } from '../../src/db/schema/accounts.js';
import { mintSession, SESSION_COOKIE } from '../../src/features/accounts/sessions/session-service.js';
import { systemClock } from '../../src/lib/clock.js';
import { cryptoRandom } from '../../src/lib/random.js';
import { spawnService } from '../../test/helpers/process.js';
import { ThrowawayPostgres } from '../../test/helpers/throwaway-postgres.js';
import { writeWorld } from './world-files.js';

const MIB = 1024 * 1024;
const worldMib = Number(process.env.BENCH_WORLD_MIB ?? 1024);
const CONSOLE_HOST = 'console.felis.test';
const SERVER = 'bench-world';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

function call(port: number, method: string, path: string, cookie: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { Cookie: cookie, Host: CONSOLE_HOST, 'Sec-Fetch-Site': 'same-origin' };
  if (method !== 'GET') headers.Origin = `https://${CONSOLE_HOST}`;
  if (payload) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) });
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function adminCookie(url: string): Promise<string> {
  const database = await openDatabase({ url, dataDir: '' });
  try {
    const now = new Date();
    const [user] = await database.db.insert(users).values({ username: 'bench_admin', role: 'admin', createdAt: now, updatedAt: now }).returning({ id: users.id });
    const { token } = await mintSession({ clock: systemClock, random: cryptoRandom }, database.db, { userId: user!.id, host: CONSOLE_HOST, method: 'passkey' });
    return `${SESSION_COOKIE}=${token}`;
  } finally {
    await database.close();
  }
}

/** The service's resident set, sampled every 50 ms: the peak since the last `reset`. */
class RssSampler {
  #peak = 0;
  readonly #timer: NodeJS.Timeout;
  constructor(private readonly pid: number) {
    this.#timer = setInterval(() => (this.#peak = Math.max(this.#peak, this.now())), 50);
  }
  now(): number {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
    return Number(match?.[1] ?? 0) * 1024;
  }
  reset(): void {
    this.#peak = this.now();
  }
  get peak(): number {
    return this.#peak;
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}

/** Polls the server's jobs until the newest of `kind` has ended; returns it. */
async function jobEnded(port: number, cookie: string, kind: string, after: Set<string>): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 60 * 60 * 1000;
  while (Date.now() < deadline) {
    const { body } = await call(port, 'GET', `/api/v1/servers/${SERVER}/jobs`, cookie);
    const job = (body.jobs as Array<Record<string, unknown>>).find((j) => j.kind === kind && !after.has(j.name as string));
    if (job && job.state !== 'running') return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the ${kind} job did not end within an hour`);
}

const seconds = (started: number) => (performance.now() - started) / 1000;

function baseline(world: string, scratch: string): { backup: number; restore: number } {
  const archive = join(scratch, 'baseline.tar.gz');
  let started = performance.now();
  execFileSync('bash', ['-c', 'set -o pipefail; tar -cf - -C "$1" . | gzip -1 | tee "$2" | sha256sum >/dev/null && sha256sum "$2" >/dev/null', 'baseline', world, archive]);
  const backup = seconds(started);
  const into = join(scratch, 'baseline-restore');
  mkdirSync(into);
  started = performance.now();
  execFileSync('bash', ['-c', 'set -o pipefail; tee >(sha256sum >/dev/null) < "$1" | gzip -dc | tar -xf - -C "$2"', 'baseline', archive, into]);
  return { backup, restore: seconds(started) };
}

const dataDir = mkdtempSync(join(tmpdir(), 'felis-bench-worlds-'));
const pg = await ThrowawayPostgres.create();
try {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  const cookie = await adminCookie(pg.url);
  const world = join(dataDir, 'worlds', SERVER);
  await writeWorld(world, worldMib);
  const base = baseline(world, mkdtempSync(join(dataDir, 'scratch-')));

  const service = await spawnService(process.execPath, ['dist/main.js'], { DATABASE_URL: pg.url, DATA_DIR: dataDir, CONSOLE_HOST });
  const rss = new RssSampler(service.child.pid!);
  try {
    const port = service.externalPort;
    const created = await call(port, 'POST', '/api/v1/servers', cookie, { name: SERVER, subdomain: SERVER });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    const idleRss = rss.now();

    rss.reset();
    let started = performance.now();
    const backing = await call(port, 'POST', `/api/v1/servers/${SERVER}/backup`, cookie);
    if (backing.status !== 202) throw new Error(`backup: ${backing.status} ${JSON.stringify(backing.body)}`);
    const backup = await jobEnded(port, cookie, 'backup', new Set());
    const backupSeconds = seconds(started);
    const backupPeak = rss.peak;
    if (backup.state !== 'succeeded') throw new Error(`backup job: ${JSON.stringify(backup)}`);

    rss.reset();
    started = performance.now();
    const restoring = await call(port, 'POST', `/api/v1/servers/${SERVER}/restore-backup`, cookie, { backup_id: backup.backup_id, safety_snapshot: false });
    if (restoring.status !== 202) throw new Error(`restore: ${restoring.status} ${JSON.stringify(restoring.body)}`);
    const restore = await jobEnded(port, cookie, 'restore', new Set([backup.name as string]));
    const restoreSeconds = seconds(started);
    const restorePeak = rss.peak;
    if (restore.state !== 'succeeded') throw new Error(`restore job: ${JSON.stringify(restore)}`);

    const mib = (bytes: number) => Math.round(bytes / MIB);
    console.log(
      JSON.stringify(
        {
          world_mib: worldMib,
          backup: { seconds: +backupSeconds.toFixed(1), mib_per_s: +(worldMib / backupSeconds).toFixed(1), baseline_seconds: +base.backup.toFixed(1), ratio_to_baseline: +(backupSeconds / base.backup).toFixed(2) },
          restore: { seconds: +restoreSeconds.toFixed(1), mib_per_s: +(worldMib / restoreSeconds).toFixed(1), baseline_seconds: +base.restore.toFixed(1), ratio_to_baseline: +(restoreSeconds / base.restore).toFixed(2) },
          service_rss_mib: { idle: mib(idleRss), backup_peak: mib(backupPeak), restore_peak: mib(restorePeak) },
        },
        null,
        2,
      ),
    );
  } finally {
    rss.stop();
    service.child.kill('SIGTERM');
    await service.exited;
  }
} finally {
  await pg.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}
