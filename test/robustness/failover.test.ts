import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3rver, type S3rverProcess } from '../../src/adapters/backup-store/s3rver-process.js';
import { createPostgresTestDatabase } from '../helpers/database.js';
import { runFailover, runWorldLockFailover } from '../helpers/failover.js';
import { applyManifest, realApiServer, useApiNamespace } from '../helpers/kube-api.js';
import { useTempDir } from '../helpers/worlds.js';
import { LEASE_TIMING } from '../../src/adapters/cluster/kubernetes/lease.js';

/**
 * Issue 32's failover, as a test: two service processes on one PostgreSQL database, one S3 server
 * process, CLUSTER=kubernetes against the run's real API server (the test plays the StatefulSet
 * controller, the kubelet and the game's RCON port); the controller's leader is SIGKILLed under
 * load, just after a server was woken through it. PostgreSQL only (two processes cannot share an embedded database); skipped
 * without TEST_DATABASE_URL or without the envtest binaries.
 */
const postgres = Boolean(process.env.TEST_DATABASE_URL);
const apiServer = realApiServer();
if (!postgres || !apiServer) {
  process.stdout.write(`failover test skipped: ${!postgres ? 'needs PostgreSQL (TEST_DATABASE_URL)' : 'needs the envtest binaries (npm run envtest:build)'}\n`);
}

describe.skipIf(!postgres || !apiServer)('failover of one of two replicas under load (issue 32)', () => {
  const api = useApiNamespace('felis-failover');
  const tempDir = useTempDir('felis-failover-');
  let s3: S3rverProcess;
  beforeAll(async () => {
    s3 = await startS3rver(tempDir());
    const { kubeConfig } = api();
    await applyManifest(kubeConfig, 'base/crd.yaml');
    await kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: api().namespace });
  });
  afterAll(async () => {
    await s3?.stop();
  });

  it('answers or fails at the kill, finishes the upload through the survivor, moves every leader within its lease, carries a wake across the kill, loses and doubles nothing; the killed replica returns', { timeout: 240_000 }, async () => {
    const databaseUrl = (await createPostgresTestDatabase())!;
    const figures = await runFailover({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/main.ts'],
      databaseUrl,
      kubeconfig: apiServer!,
      namespace: api().namespace,
      s3: { endpoint: s3.endpoint, bucket: s3.bucket },
      step: (what) => process.stdout.write(`failover: ${what}\n`),
    });
    process.stdout.write(`failover: ${JSON.stringify(figures)}\n`);
    // Every request was answered, or failed on the killed replica at the kill.
    expect(figures.wrong).toEqual([]);
    expect(figures.answered + figures.failedAtKill).toBe(figures.requests);
    // Those that failed at the kill: at most the one each worker had on the killed replica then or
    // sent before it saw the replica gone.
    expect(figures.failedAtKill).toBeLessThanOrEqual(figures.concurrency);
    expect(figures.answered).toBeGreaterThan(0);
    expect(Object.keys(figures.perReplica)).toHaveLength(2);
    // The controller (and every other leadership the killed replica held) has a runner again
    // within its lease and the follower's poll.
    expect(Object.keys(figures.takeoverSeconds)).toContain('lease:felis-lifecycle-controller');
    // (The controller's Kubernetes Lease has client-go's 15 s; the database's leader leases their own.)
    for (const [key, seconds] of Object.entries(figures.takeoverSeconds)) {
      expect(seconds).toBeLessThan((key.startsWith('lease:') ? LEASE_TIMING.leaseDurationMs / 1000 : figures.leaseSeconds) + 5);
    }
    // The upload, in parts on both, finished through the survivor: whole, once, nothing left staged.
    expect(figures.upload).toMatchObject({ sha256Matches: true, stagedLeft: 0, submissionRows: 1 });
    // The killed replica's second life answers, and its previous life's leases are gone.
    expect(figures.returned).toMatchObject({ answered: figures.returned.of, leftoverLeases: 0 });
    // The wake sent to the killed replica just before the kill was carried through by the
    // survivor's controller (once it leads: within the lease and the pod's start), and a stop sent
    // to the survivor afterwards was carried out cleanly.
    expect(figures.wake).toMatchObject({ status: 202, stopStatus: 202, savedBeforeStop: true });
    expect(figures.wake.runningSeconds).not.toBeNull();
    expect(figures.wake.stopSeconds).not.toBeNull();
  });
});

/**
 * A replica SIGKILLed while its own process holds a world's lock (a backup of a large world under
 * way): the survivor's writes are refused until its heartbeat watch judges the victim dead (its
 * heartbeat stood still for the TTL), then go through, long before the lock's 60 s lease; the
 * victim's job is failed. Two processes on one PostgreSQL database and one DATA_DIR (the world
 * volume they share), CLUSTER=simulated: on Kubernetes a world's work runs in a cluster Job that
 * outlives its starter, so its lock stays with the Job (src/features/worlds/adoption.ts).
 */
describe.skipIf(!postgres)('a replica killed while it holds a world (issue 32)', () => {
  const tempDir = useTempDir('felis-world-lock-');

  it('lets the survivor write within the heartbeat TTL, not the lock lease, and fails the dead job', { timeout: 180_000 }, async () => {
    const figures = await runWorldLockFailover({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/main.ts'],
      databaseUrl: (await createPostgresTestDatabase())!,
      dataDir: tempDir(),
      step: (what) => process.stdout.write(`world lock: ${what}\n`),
    });
    process.stdout.write(`world lock: ${JSON.stringify(figures)}\n`);
    expect(figures.wrong).toEqual([]);
    // Refused while the victim could still be alive (the watcher needs its TTL to judge it dead)...
    expect(figures.refusedBefore).toBeGreaterThan(0);
    expect(figures.lockTakenSeconds).not.toBeNull();
    expect(figures.jobFailedSeconds).not.toBeNull();
    // ...then taken over before the lock's lease could have lapsed by itself.
    expect(figures.lockTakenSeconds!).toBeLessThan(figures.lockLeaseSeconds);
    expect(figures.jobFailedSeconds!).toBeLessThan(figures.lockLeaseSeconds);
  });
});
