import { leases } from '../../db/schema/coordination.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { applyServiceRbac, PlayedCluster, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../../../test/helpers/kube-api.js';
import { KubeStandIn } from '../../../test/helpers/kube-stand-in.js';
import { addServer } from '../../../test/helpers/servers.js';
import { createUser } from '../../../test/helpers/sessions.js';
import { claimFor, useTempDir } from '../../../test/helpers/worlds.js';
import { LocalBackupStore } from '../../adapters/backup-store/local.js';
import { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { kubeConfigFor } from '../../adapters/cluster/kubernetes/kubeconfig.js';
import { worldBackups, worldJobs } from '../../db/schema/worlds.js';
import { main as worldJobCli } from '../../cli/world-job.js';
import { DomainError } from '../../lib/errors.js';
import { startBackup, startRestore } from './backups/service.js';
import { lockSweep } from './housekeeping.js';
import { reclaimIdleWorlds } from './reclaim/service.js';
import { KubernetesWorldJobRunner, worldJobName } from '../../adapters/cluster/kubernetes/world-jobs.js';
import { JobTracker } from './volumes/index.js';

const JOB_ID = '0b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b';
const database = useTestDatabase();
const tempDir = useTempDir();

/**
 * The world-job suites' world: a service whose runner makes Jobs through `client` in `namespace`,
 * and a pod played by the test that runs the real CLI with the Job's own arguments.
 */
function worldJobWorld(cluster: () => { client: KubernetesCluster; namespace: string; endJob: (name: string, end: { succeeded: boolean; message?: string; reason?: string }) => Promise<void>; getJob: (name: string) => Promise<{ spec?: unknown } | undefined> }) {

  /** A service on "Kubernetes": no local folders, the runner creates Jobs; the "volume" is a local folder the pod sees. */
  async function setUp(signal?: AbortSignal) {
    const { client, namespace: NS } = cluster();
    const root = tempDir();
    const store = new LocalBackupStore(join(root, 'backups'));
    const deps = createTestDeps(database(), { overrides: { worlds: { store, jobs: new JobTracker() } } });
    deps.worlds.runner = new KubernetesWorldJobRunner({ client, namespace: NS, image: 'felis:test', storeSecret: 'store', deadlineSeconds: 600, log: deps.log, pollMs: 5, signal });
    await deps.serverCache.ready();
    const name = addServer(deps).spec.name;
    const volume = join(root, 'volume');
    mkdirSync(join(volume, 'world'), { recursive: true });
    writeFileSync(join(volume, 'world', 'level.dat'), `the world of ${name}`);
    return { deps, name, volume, root, store };
  }

  async function createdJob(name: string) {
    return vi.waitFor(async () => {
      const job = await cluster().getJob(worldJobName(name));
      if (!job) throw new Error('no job yet');
      return job;
    });
  }

  /** The pod: runs the real CLI with the Job's own arguments on the volume, then the Job ends with its termination message. */
  async function playPod(setup: { name: string; volume: string; root: string }) {
    const job = await createdJob(setup.name);
    const args = ((job.spec as { template: { spec: { containers: Array<{ args: string[] }> } } }).template.spec.containers[0]!.args).map((a) => (a === '/data' ? setup.volume : a));
    const log = join(setup.root, `termination-${Math.random()}`);
    const write = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    let code: number;
    try {
      code = await worldJobCli(args, { WORLD_JOB_LOCAL_STORE: join(setup.root, 'backups'), TERMINATION_LOG: log });
    } finally {
      process.stdout.write = write;
    }
    await cluster().endJob(worldJobName(setup.name), { succeeded: code === 0, message: readFileSync(log, 'utf8') });
  }

  async function jobRow(deps: TestDeps, id: string) {
    const [row] = await deps.database.db.select().from(worldJobs).where(eq(worldJobs.id, id));
    return row!;
  }

  return { setUp, createdJob, playPod, jobRow };
}

/**
 * On the run's real API server, as the service's own ServiceAccount (its Role must allow every
 * Job, pod and claim call the runner makes); the test plays the Job controller and the pod.
 */
describe.skipIf(!realApiServer())('world jobs as Kubernetes Jobs (real API server)', () => {
  const api = useApiNamespace('felis-worlds');
  let admin: KubeConfig;
  let NS: string;
  let client: KubernetesCluster;
  let played: PlayedCluster;
  beforeAll(async () => {
    ({ kubeConfig: admin, namespace: NS } = api());
    await applyServiceRbac(admin, NS);
    played = new PlayedCluster(admin, NS);
    await played.prepareNamespace();
    const kubeConfig = await vi.waitFor(() => serviceAccountKubeConfig(admin, NS), { timeout: 20_000, interval: 100 });
    client = new KubernetesCluster({ kubeConfig, namespace: NS });
    await vi.waitFor(() => client.listJobs('felis.dev/none'), { timeout: 20_000, interval: 100 });
    return () => client.close();
  });
  const { setUp, createdJob, playPod, jobRow } = worldJobWorld(() => ({
    client,
    namespace: NS,
    endJob: (name, end) => played.endJob(name, end),
    getJob: (name) => client.getJob(name),
  }));

  it('backs up through a Job that runs the CLI on the claim; the world stays locked while it runs', async () => {
    const setup = await setUp();
    const { deps, name } = setup;
    const { jobId, done } = await startBackup(deps, name, 'someone');
    await createdJob(name);
    await expect(startBackup(deps, name, 'someone')).rejects.toMatchObject({ code: 'maintenance_in_progress' });
    await playPod(setup);
    await done;
    const job = await jobRow(deps, jobId);
    expect(job).toMatchObject({ kind: 'backup', state: 'succeeded' });
    const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.id, job.backupId!));
    expect(backup).toMatchObject({ status: 'present', corrupt: false, reason: 'manual' });
    expect(backup!.verifiedAt).not.toBeNull();
    expect(await client.getJob(worldJobName(name))).toBeUndefined();
    expect(await deps.database.db.select().from(leases).where(eq(leases.key, `world:${name}`))).toEqual([]);
  });

  it('restores through one Job that takes the pre_restore snapshot first', async () => {
    const setup = await setUp();
    const { deps, name, volume } = setup;
    const backedUp = await startBackup(deps, name, 'someone');
    await playPod(setup);
    await backedUp.done;
    const backupId = (await jobRow(deps, backedUp.jobId)).backupId!;
    writeFileSync(join(volume, 'world', 'level.dat'), 'changed since');
    const { jobId, done } = await startRestore(deps, { serverName: name, owner: undefined, requestedBy: 'someone', backupId, safetySnapshot: true });
    await playPod(setup);
    await done;
    expect(await jobRow(deps, jobId)).toMatchObject({ kind: 'restore', state: 'succeeded', backupId });
    expect(readFileSync(join(volume, 'world', 'level.dat'), 'utf8')).toBe(`the world of ${name}`);
    const rows = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name));
    const snapshot = rows.find((r) => r.reason === 'pre_restore');
    expect(snapshot).toMatchObject({ status: 'present', corrupt: false });
    const snapJobs = await deps.database.db.select().from(worldJobs).where(eq(worldJobs.lockHolder, jobId));
    expect(snapJobs.find((j) => j.id !== jobId)).toMatchObject({ kind: 'backup', state: 'succeeded', backupId: snapshot!.id });
  });

  it('fails the job with the Job\'s reason when it ends without reporting (deadline passed)', async () => {
    const { deps, name } = await setUp();
    const { jobId, done } = await startBackup(deps, name, 'someone');
    await createdJob(name);
    await played.endJob(worldJobName(name), { succeeded: false, reason: 'DeadlineExceeded' });
    await done;
    const job = await jobRow(deps, jobId);
    expect(job).toMatchObject({ state: 'failed', message: 'failed: the job passed its deadline and was stopped' });
    const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name));
    expect(backup!.status).toBe('failed');
  });

  it('keeps the world locked while a Job outlives its starter, and settles it from its plan once it ends', async () => {
    const stopping = new AbortController();
    const setup = await setUp(stopping.signal);
    const { deps, name } = setup;
    const { jobId, done } = await startBackup(deps, name, 'someone');
    await createdJob(name);
    stopping.abort(); // the starting replica stops: the Job runs on
    await done;
    expect((await jobRow(deps, jobId)).state).toBe('running');

    // Past the lease: the other replicas' sweep keeps the lock for the live Job and fails nothing.
    deps.clock.advance(5 * 60_000);
    await lockSweep(deps);
    expect((await jobRow(deps, jobId)).state).toBe('running');
    const [lock] = await deps.database.db.select().from(leases).where(eq(leases.key, `world:${name}`));
    expect(lock).toMatchObject({ holder: jobId });
    await expect(startBackup(deps, name, 'someone')).rejects.toBeInstanceOf(DomainError);

    await playPod(setup);
    deps.clock.advance(61_000); // nobody renews an ended Job's lock: its starter is gone
    await lockSweep(deps);
    const job = await jobRow(deps, jobId);
    expect(job).toMatchObject({ state: 'succeeded' });
    const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.id, job.backupId!));
    expect(backup).toMatchObject({ status: 'present', corrupt: false });
    expect(await client.getJob(worldJobName(name))).toBeUndefined();
    expect(await deps.database.db.select().from(leases).where(eq(leases.key, `world:${name}`))).toEqual([]);
  });

  it('refuses a job while a Job of an earlier holder still has the volume, even with no lock', async () => {
    const { deps, name } = await setUp();
    await client.createJob({
      metadata: { name: worldJobName(name), labels: { 'felis.dev/world-job': JOB_ID } },
      spec: { template: { spec: { restartPolicy: 'Never', automountServiceAccountToken: false, containers: [{ name: 'earlier', image: 'felis:test' }] } } },
    });
    await expect(startBackup(deps, name, 'someone')).rejects.toMatchObject({ code: 'maintenance_in_progress' });
    expect(await deps.database.db.select().from(leases).where(eq(leases.key, `world:${name}`))).toEqual([]);
    await client.deleteJob(worldJobName(name));
  });

  it('reclaims an idle world: the Job archives it, and only a verified archive gives the claim back', async () => {
    const setup = await setUp();
    const { deps, name } = setup;
    await admin.makeApiClient(CoreV1Api).createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: { metadata: { name: `world-${name}-0` }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    const owner = await createUser(deps);
    await claimFor(deps, name, owner.id);
    deps.clock.advance(16 * 24 * 3600_000);
    const reclaiming = reclaimIdleWorlds(deps);
    await playPod(setup);
    expect(await reclaiming).toEqual([name]);
    // Deleted; the claim's protection finalizer comes off (no pod uses it) and it is gone.
    await played.releaseDeletedClaims();
    expect(await client.getPersistentVolumeClaim(`world-${name}-0`)).toBeUndefined();
    const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name));
    expect(backup).toMatchObject({ reason: 'inactive_15d', status: 'present', corrupt: false, formerOwner: owner.id });
    // No claim, no volume: nothing more to reclaim.
    expect(await reclaimIdleWorlds(deps)).toEqual([]);
  });

});

const STAND_IN_NS = 'felis';

/** What a real API server cannot be made to do on cue: fail a read (503) for a while. */
describe('world jobs as Kubernetes Jobs while the API fails (API stand-in)', () => {
  let standIn: KubeStandIn;
  let client: KubernetesCluster;
  beforeAll(async () => {
    standIn = await KubeStandIn.start();
    client = new KubernetesCluster({ kubeConfig: kubeConfigFor(standIn.url), namespace: STAND_IN_NS });
  });
  afterAll(async () => {
    await client.close();
    await standIn.close();
  });
  const { setUp, createdJob, playPod, jobRow } = worldJobWorld(() => ({
    client,
    namespace: STAND_IN_NS,
    endJob: async (name, end) => standIn.endJob(STAND_IN_NS, name, end),
    getJob: async (name) => standIn.get('jobs', STAND_IN_NS, name),
  }));

  it('reads the Job and its outcome again when the API fails for a while', async () => {
    const setup = await setUp();
    const { deps, name } = setup;
    const { jobId, done } = await startBackup(deps, name, 'someone');
    await createdJob(name);
    standIn.failNext('GET', `/apis/batch/v1/namespaces/${STAND_IN_NS}/jobs/${worldJobName(name)}`, 503, 2);
    standIn.failNext('GET', `/api/v1/namespaces/${STAND_IN_NS}/pods`, 503, 2);
    await playPod(setup);
    await done;
    expect(await jobRow(deps, jobId)).toMatchObject({ state: 'succeeded' });
  });

  it('does not judge jobs orphaned while the cluster cannot be read', async () => {
    const stopping = new AbortController();
    const { deps, name } = await setUp(stopping.signal);
    const { jobId, done } = await startBackup(deps, name, 'someone');
    await createdJob(name);
    stopping.abort();
    await done;
    deps.clock.advance(5 * 60_000);
    standIn.failNext('GET', `/apis/batch/v1/namespaces/${STAND_IN_NS}/jobs`, 503);
    await lockSweep(deps);
    expect((await jobRow(deps, jobId)).state).toBe('running');
    standIn.remove('jobs', STAND_IN_NS, worldJobName(name));
  });
});
