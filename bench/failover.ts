/**
 * Issue 32's failover, on the compiled service, with its figures printed.
 *
 *   npm run bench:failover            (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 *
 * Two `node dist/main.js` processes (built first) on one fresh PostgreSQL database, one S3 server
 * process (s3rver) and one real API server (tools/envtest, binaries in ENVTEST_BIN),
 * CLUSTER=kubernetes. A client spreads the proxy's GET /api/v1/servers and the panel's GET
 * /api/v1/me over both replicas (round robin, 4 in flight) while a submission context goes up in
 * parts to both; the replica leading the controller is SIGKILLed after 5 s of load; the upload
 * finishes through the survivor; the killed replica comes back. The bench plays the cluster
 * parts the API server lacks (StatefulSet controller, kubelet, the game's RCON port), and a server
 * is woken through the replica just before it is killed. The scenario is the test's
 * (test/helpers/failover.ts); this prints its figures: requests answered, failed at the kill,
 * seconds until each leadership the killed replica held has a runner again (against the lease),
 * the upload's integrity, the wake crossing the kill (seconds until Running and ready through the
 * survivor, and a stop after it), and the second life.
 *
 * Then the dead replica's world lock (`runWorldLockFailover`): two more processes on a second
 * fresh database and one shared DATA_DIR, CLUSTER=simulated; one is SIGKILLed while a backup of a
 * 96 MiB world holds the world's lock in its process; printed: seconds until the survivor's file
 * write goes through and until the dead job is failed (against the heartbeat TTL and the lock's
 * 60 s lease).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import postgres from 'postgres';
import { parseAllDocuments } from 'yaml';
import { startS3rver } from '../src/adapters/backup-store/s3rver-process.js';
import { migratePostgres } from '../src/db/migrate.js';
import { envtestAvailable, ENVTEST_BIN, startEnvtest } from '../test/helpers/envtest.js';
import { runFailover, runWorldLockFailover } from '../test/helpers/failover.js';

if (!envtestAvailable()) {
  process.stdout.write(`no kube-apiserver and etcd in ${ENVTEST_BIN} (npm run envtest:build): nothing to measure\n`);
  process.exit(0);
}
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });

const database = `felis_failover_${randomBytes(4).toString('hex')}`;
const lockDatabase = `${database}_lock`;
const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
const urlOf = (name: string) => {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
};
await admin.unsafe(`create database "${database}"`);
await admin.unsafe(`create database "${lockDatabase}"`);
const databaseUrl = urlOf(database);
const dir = mkdtempSync(join(tmpdir(), 'felis-failover-bench-'));
const envtest = startEnvtest();
const s3 = await startS3rver(dir);
try {
  await migratePostgres(databaseUrl);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(envtest.kubeconfig);
  const namespace = 'felis-failover';
  await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  for (const document of parseAllDocuments(readFileSync(new URL('../../deploy/base/crd.yaml', import.meta.url), 'utf8'))) {
    const object = document.toJS() as KubernetesObject | null;
    if (object?.kind) await objects.create(object);
  }

  const started = performance.now();
  const figures = await runFailover({
    command: process.execPath,
    args: ['dist/main.js'],
    databaseUrl,
    kubeconfig: envtest.kubeconfig,
    namespace,
    s3: { endpoint: s3.endpoint, bucket: s3.bucket },
    loadMs: 5_000,
    step: (what) => process.stdout.write(`- ${what}\n`),
  });
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write('- the dead replica\'s world lock: two more processes, CLUSTER=simulated, one DATA_DIR\n');
  await migratePostgres(urlOf(lockDatabase));
  const lock = await runWorldLockFailover({
    command: process.execPath,
    args: ['dist/main.js'],
    databaseUrl: urlOf(lockDatabase),
    dataDir: mkdtempSync(join(dir, 'world-lock-')),
    step: (what) => process.stdout.write(`- ${what}\n`),
  });
  const after = (s: number | null) => (s === null ? 'NEVER (within the lock lease + 10 s)' : `${s.toFixed(1)} s`);
  const rows: Array<[string, string]> = [
    ['requests sent', String(figures.requests)],
    ['answered correctly', `${figures.answered} (${((100 * figures.answered) / figures.requests).toFixed(2)} %)`],
    ['failed at the kill', String(figures.failedAtKill)],
    ['failed otherwise', String(figures.wrong.length)],
    ['answers per replica', Object.entries(figures.perReplica).map(([pod, n]) => `${pod} ${n}`).join(', ')],
    ...Object.entries(figures.takeoverSeconds).map(([key, s]): [string, string] => [`${key} runner again after`, `${s.toFixed(1)} s (lease ${figures.leaseSeconds} s, ${(s / figures.leaseSeconds).toFixed(2)}×)`]),
    ['upload', `${figures.upload.bytes} bytes, ${figures.upload.partsOnKilled} parts on the killed replica, ${figures.upload.partsOnSurvivor} on the survivor; sha-256 ${figures.upload.sha256Matches ? 'matches' : 'DIFFERS'}; ${figures.upload.submissionRows} row; ${figures.upload.stagedLeft} bytes left staged`],
    ['wake sent to the killed replica', `${figures.wake.status}; Running and ready through the survivor ${after(figures.wake.runningSeconds)} after the kill`],
    ['stop sent to the survivor', `${figures.wake.stopStatus}; Stopped after ${after(figures.wake.stopSeconds)}; save-all before: ${figures.wake.savedBeforeStop ? 'yes' : 'NO'}`],
    ['killed replica back', `listening after ${figures.returned.seconds.toFixed(1)} s; answered ${figures.returned.answered} of ${figures.returned.of}; ${figures.returned.leftoverLeases} leases of its previous life left`],
    ['whole run', `${seconds.toFixed(1)} s`],
    ['victim\'s world lock taken over', `${after(lock.lockTakenSeconds)} after the kill (heartbeat TTL ${lock.heartbeatTtlSeconds} s, lock lease ${lock.lockLeaseSeconds} s); ${lock.refusedBefore} writes refused before, ${lock.wrong.length} other answers`],
    ['victim\'s world job failed', `${after(lock.jobFailedSeconds)} after the kill`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(width)}  ${v}\n`);
  if (figures.wrong.length > 0) process.stdout.write(`failed otherwise: ${JSON.stringify(figures.wrong.slice(0, 10))}\n`);
} finally {
  await s3.stop();
  envtest.stop();
  await admin.unsafe(`drop database if exists "${database}" with (force)`).catch(() => undefined);
  await admin.unsafe(`drop database if exists "${lockDatabase}" with (force)`).catch(() => undefined);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
}
