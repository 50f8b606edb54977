import { leases } from '../../../db/schema/coordination.js';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { FakeKubelet } from '../../../../test/helpers/fake-kubelet.js';
import { applyServiceRbac, PlayedCluster, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../../../../test/helpers/kube-api.js';
import { KubeStandIn } from '../../../../test/helpers/kube-stand-in.js';
import { addServer } from '../../../../test/helpers/servers.js';
import { claimFor, useTempDir, worldMember } from '../../../../test/helpers/worlds.js';
import { LocalBackupStore } from '../../../adapters/backup-store/local.js';
import { KubernetesCluster } from '../../../adapters/cluster/kubernetes/adapter.js';
import { kubeConfigFor } from '../../../adapters/cluster/kubernetes/kubeconfig.js';
import { main as worldJobCli } from '../../../cli/world-job.js';
import { RESULT_MARKER } from '../../../adapters/cluster/world-file-protocol.js';
import { FILE_JOB_WAIT_MS, fileJobManifest, KubernetesWorldFileOps } from '../../../adapters/cluster/kubernetes/world-files.js';
import { JobTracker } from '../volumes/index.js';

/** A Job as either API answers it. */
type KubeObject = { metadata: { name: string; labels?: Record<string, string> }; spec?: unknown; status?: { conditions?: unknown[] } };
const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

type Container = { name: string; args: string[]; env?: Array<{ name: string; value: string }>; envFrom?: unknown; volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }> };
type PodSpec = { containers: Container[]; volumes: Array<{ name: string; persistentVolumeClaim?: { claimName: string; readOnly?: boolean } }>; automountServiceAccountToken: boolean; securityContext: Record<string, unknown> };
const podSpecOf = (job: KubeObject | ReturnType<typeof fileJobManifest>) => (job.spec as { template: { spec: PodSpec } }).template.spec;

const database = useTestDatabase();
const tempDir = useTempDir();

interface FilesCluster {
  client: KubernetesCluster;
  namespace: string;
  jobs(): Promise<KubeObject[]>;
  getJob(name: string): Promise<unknown>;
  /** The Job ends; its pod's log holds `log`. */
  endJob(name: string, end: { succeeded: boolean; reason?: string; log: string[] }): Promise<void>;
}

/** The file routes' world on a cluster: the service, its claim as a local folder, and the pod the test plays. */
function filesWorld(cluster: () => FilesCluster) {

  /** A service on "Kubernetes": no local folders; the claim is a local folder only the test's "pod" touches. */
  async function setUp() {
    const { client, namespace: NS } = cluster();
    const root = tempDir();
    const deps = createTestDeps(database(), { overrides: { worlds: { store: new LocalBackupStore(join(root, 'backups')), jobs: new JobTracker() } } });
    deps.worlds.files = new KubernetesWorldFileOps({ client, namespace: NS, image: 'felis:test', log: deps.log, clock: deps.clock, pollMs: 5 });
    const { external } = createTestApps(deps);
    const owner = await worldMember(deps);
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, owner.id);
    const volume = join(root, 'volume');
    mkdirSync(join(volume, 'world'), { recursive: true });
    writeFileSync(join(volume, 'server.properties'), 'motd=hello\n');
    const base = `/api/v1/servers/${name}`;
    const q = (path: string) => `?path=${encodeURIComponent(path)}`;
    return { deps, external, owner, name, volume, base, q };
  }

  const filesJobs = async (name: string) =>
    (await cluster().jobs()).filter((j) => j.metadata.labels?.['felis.dev/world-server'] === name && j.metadata.name.startsWith('felis-files-'));

  async function createdJob(name: string) {
    return vi.waitFor(async () => {
      const job = (await filesJobs(name)).find((j) => !j.status?.conditions?.length);
      if (!job) throw new Error('no file job yet');
      return job;
    });
  }

  /** The pod: the real CLI with the Job's own argv and env on the "claim", its stdout appended to the pod's log. */
  async function playPod(setup: { name: string; volume: string }) {
    const job = await createdJob(setup.name);
    const container = podSpecOf(job).containers[0]!;
    const args = container.args.map((a) => (a === '/data' ? setup.volume : a));
    const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
    let out = '';
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string, ...rest: unknown[]) => {
      out += chunk;
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }) as typeof process.stdout.write;
    let code: number;
    try {
      code = await worldJobCli(args, env);
    } finally {
      process.stdout.write = write;
    }
    await cluster().endJob(job.metadata.name, { succeeded: code === 0, log: ['Picked up JAVA_TOOL_OPTIONS: noise', ...out.split('\n').filter(Boolean)] });
    return job;
  }

  /** Sends a request and plays the pod of the Job it starts. */
  async function throughJob(setup: { name: string; volume: string; external: { request: (url: string, init?: RequestInit) => Response | Promise<Response> } }, url: string, init?: RequestInit) {
    const answer = Promise.resolve(setup.external.request(url, init));
    const job = await playPod(setup);
    const response = await answer;
    expect(await cluster().getJob(job.metadata.name)).toBeUndefined();
    return { response, job };
  }

  return { setUp, filesJobs, createdJob, playPod, throughJob };
}

/**
 * On the run's real API server, as the service's own ServiceAccount: the test plays the Job
 * controller, and the file Job's answer is read from its pod's log through the API server's log
 * proxy, from a FakeKubelet.
 */
describe.skipIf(!realApiServer())('world file routes on Kubernetes (real API server)', () => {
  const api = useApiNamespace('felis-files');
  let NS: string;
  let client: KubernetesCluster;
  let played: PlayedCluster;
  let kubelet: FakeKubelet;
  beforeAll(async () => {
    const { kubeConfig: admin, namespace } = api();
    NS = namespace;
    await applyServiceRbac(admin, NS);
    played = new PlayedCluster(admin, NS);
    await played.prepareNamespace();
    kubelet = await FakeKubelet.start();
    await kubelet.registerNode(admin, `${NS}-kubelet`);
    const kubeConfig = await vi.waitFor(() => serviceAccountKubeConfig(admin, NS), { timeout: 20_000, interval: 100 });
    client = new KubernetesCluster({ kubeConfig, namespace: NS });
    await vi.waitFor(() => client.listJobs('felis.dev/none'), { timeout: 20_000, interval: 100 });
    return async () => {
      await client.close();
      await kubelet.close();
      await admin.makeApiClient(CoreV1Api).deleteNode({ name: `${NS}-kubelet` }).catch(() => undefined);
    };
  });
  const { setUp, filesJobs, createdJob, playPod, throughJob } = filesWorld(() => ({
    client,
    namespace: NS,
    jobs: async () => (await client.listJobs('felis.dev/world-server')) as KubeObject[],
    getJob: (name) => client.getJob(name),
    endJob: (name, end) => played.endJob(name, end, { kubelet, node: `${NS}-kubelet` }),
  }));

  it('lists and reads through read-only Jobs on the claim, and deletes each Job once read', async () => {
    const setup = await setUp();
    const { owner, base, q, name } = setup;
    const listed = await throughJob(setup, `${base}/files`, { headers: owner.headers });
    expect(listed.response.status).toBe(200);
    const listing = (await listed.response.json()) as { path: string; entries: Array<{ name: string; is_dir: boolean }>; truncated: boolean; free_bytes: number };
    expect(listing).toMatchObject({ path: '', truncated: false });
    expect(listing.entries.map((e) => [e.name, e.is_dir])).toEqual([['server.properties', false], ['world', true]]);
    const spec = podSpecOf(listed.job);
    expect(spec.volumes[0]).toEqual({ name: 'world', persistentVolumeClaim: { claimName: `world-${name}-0`, readOnly: true } });

    const read = await throughJob(setup, `${base}/file${q('server.properties')}`, { headers: owner.headers });
    expect(await read.response.json()).toEqual({ path: 'server.properties', content: b64('motd=hello\n'), sha256: sha('motd=hello\n'), content_sha256: sha('motd=hello\n') });
    expect(podSpecOf(read.job).containers[0]!.args).toEqual(['files', 'read', '--folder', '/data', '--path', 'server.properties']);
    expect(await filesJobs(name)).toEqual([]);
  });

  it('reads 1 MiB whole through the pod log, answers 413 over it, 404 for nothing there, and truncates a listing at 2,000 entries', async () => {
    const setup = await setUp();
    const { owner, base, q, volume } = setup;
    const mebibyte = Buffer.alloc(1024 * 1024, 'ab');
    writeFileSync(join(volume, 'whole.bin'), mebibyte);
    const whole = await throughJob(setup, `${base}/file${q('whole.bin')}`, { headers: owner.headers });
    expect(await whole.response.json()).toMatchObject({ content: mebibyte.toString('base64'), sha256: sha(mebibyte) });
    writeFileSync(join(volume, 'big.bin'), Buffer.alloc(1024 * 1024 + 1));
    const big = await throughJob(setup, `${base}/file${q('big.bin')}`, { headers: owner.headers });
    expect(big.response.status).toBe(413);
    expect((await errorOf(big.response)).code).toBe('too_large');
    const missing = await throughJob(setup, `${base}/file${q('nothing.txt')}`, { headers: owner.headers });
    expect(missing.response.status).toBe(404);
    expect((await errorOf(missing.response)).code).toBe('not_found');

    for (let i = 0; i < 2001; i++) writeFileSync(join(volume, 'world', `r.${String(i).padStart(4, '0')}.mca`), '');
    const listed = await throughJob(setup, `${base}/files${q('world')}`, { headers: owner.headers });
    const listing = (await listed.response.json()) as { entries: unknown[]; truncated: boolean };
    expect(listing.truncated).toBe(true);
    expect(listing.entries).toHaveLength(2000);
  });

  it('writes through a read-write Job under the world lock: file_changed for a stale expect_sha256, file_exists for create_only', async () => {
    const setup = await setUp();
    const { owner, base, q, volume, deps, name } = setup;
    const body = { content: b64('motd=changed\n'), expect_sha256: sha('motd=hello\n') };
    const answer = Promise.resolve(setup.external.request(`${base}/file${q('server.properties')}`, jsonRequest('PUT', body, owner.headers)));
    const job = await createdJob(name);
    expect(await deps.database.db.select().from(leases).where(eq(leases.key, `world:${name}`))).toHaveLength(1);
    // Not read-only (the real API server drops a `readOnly: false`, its zero value, from what it stores).
    expect(podSpecOf(job).containers[0]!.volumeMounts[0]!.readOnly ?? false).toBe(false);
    await playPod(setup);
    const written = await answer;
    expect(await written.json()).toEqual({ path: 'server.properties', status: 'written', sha256: sha('motd=changed\n') });
    expect(readFileSync(join(volume, 'server.properties'), 'utf8')).toBe('motd=changed\n');
    expect(await deps.database.db.select().from(leases).where(eq(leases.key, `world:${name}`))).toEqual([]);

    const stale = await throughJob(setup, `${base}/file${q('server.properties')}`, jsonRequest('PUT', { content: b64('other'), expect_sha256: sha('motd=hello\n') }, owner.headers));
    expect(stale.response.status).toBe(409);
    expect((await errorOf(stale.response)).code).toBe('file_changed');
    expect(readFileSync(join(volume, 'server.properties'), 'utf8')).toBe('motd=changed\n');

    const exists = await throughJob(setup, `${base}/file${q('server.properties')}`, jsonRequest('PUT', { content: b64('x'), create_only: true }, owner.headers));
    expect(exists.response.status).toBe(409);
    expect((await errorOf(exists.response)).code).toBe('file_exists');
  });

  it('makes, renames and deletes through Jobs', async () => {
    const setup = await setUp();
    const { owner, base, q, volume } = setup;
    const made = await throughJob(setup, `${base}/files/mkdir${q('plugins')}`, { method: 'POST', headers: owner.headers });
    expect(await made.response.json()).toEqual({ path: 'plugins', status: 'created' });
    const moved = await throughJob(setup, `${base}/files/rename${q('server.properties')}`, jsonRequest('POST', { to: 'plugins/old.properties' }, owner.headers));
    expect(await moved.response.json()).toEqual({ path: 'server.properties', to: 'plugins/old.properties', status: 'renamed' });
    const gone = await throughJob(setup, `${base}/file${q('plugins')}`, { method: 'DELETE', headers: owner.headers });
    expect(await gone.response.json()).toEqual({ path: 'plugins', status: 'deleted' });
    expect(existsSync(join(volume, 'plugins'))).toBe(false);
  });

  it('refuses a path escape, and a write or an upload over 256 KiB, before any Job', async () => {
    const { external, owner, base, q, name } = await setUp();
    const escape = await external.request(`${base}/file${q('../../etc/passwd')}`, { headers: owner.headers });
    expect(escape.status).toBe(400);
    expect((await errorOf(escape)).code).toBe('bad_path');
    const renameOut = await external.request(`${base}/files/rename${q('server.properties')}`, jsonRequest('POST', { to: '../x' }, owner.headers));
    expect((await errorOf(renameOut)).code).toBe('bad_path');
    const big = await external.request(`${base}/file${q('big.bin')}`, jsonRequest('PUT', { content: b64(Buffer.alloc(256 * 1024 + 1)) }, owner.headers));
    expect(big.status).toBe(413);
    expect((await errorOf(big)).code).toBe('too_large');
    const upload = await external.request(`${base}/files/upload${q('a.bin')}`, { method: 'PUT', headers: { ...owner.headers, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(256 * 1024 + 1) });
    expect(upload.status).toBe(413);
    expect((await errorOf(upload)).code).toBe('too_large');
    expect(await filesJobs(name)).toEqual([]);
  });

  it('uploads small raw bytes as a write Job: created, file_exists without overwrite, written with it', async () => {
    const setup = await setUp();
    const { owner, base, volume } = setup;
    const raw = (body: string) => ({ method: 'PUT', headers: { ...owner.headers, 'content-type': 'application/octet-stream' }, body });
    const created = await throughJob(setup, `${base}/files/upload?path=plugins.txt`, raw('one'));
    expect(await created.response.json()).toEqual({ path: 'plugins.txt', status: 'created', sha256: sha('one'), size: 3 });
    expect(podSpecOf(created.job).containers[0]!.args).toContain('--create-only');
    const exists = await throughJob(setup, `${base}/files/upload?path=plugins.txt`, raw('two'));
    expect((await errorOf(exists.response)).code).toBe('file_exists');
    const replaced = await throughJob(setup, `${base}/files/upload?path=plugins.txt&overwrite=true`, raw('three'));
    expect(await replaced.response.json()).toEqual({ path: 'plugins.txt', status: 'written', sha256: sha('three'), size: 5 });
    expect(readFileSync(join(volume, 'plugins.txt'), 'utf8')).toBe('three');
  });

  it('answers 503 and deletes the Job when it never ends, with a log line', async () => {
    const setup = await setUp();
    const { owner, base, q, deps, name } = setup;
    const answer = Promise.resolve(setup.external.request(`${base}/file${q('server.properties')}`, { headers: owner.headers }));
    await createdJob(name);
    deps.clock.advance(FILE_JOB_WAIT_MS + 1);
    const response = await answer;
    expect(response.status).toBe(503);
    expect((await errorOf(response)).code).toBe('unavailable');
    expect(await filesJobs(name)).toEqual([]);
    expect(deps.captured.lines().some((l) => l.msg === 'a world file job did not end in time; it is deleted')).toBe(true);
  });

  it('answers 503 when the Job ends without a result line (its deadline passed)', async () => {
    const setup = await setUp();
    const { owner, base, deps, name } = setup;
    const answer = Promise.resolve(setup.external.request(`${base}/files`, { headers: owner.headers }));
    const job = await createdJob(name);
    await played.endJob(job.metadata.name, { succeeded: false, reason: 'DeadlineExceeded', log: [`${RESULT_MARKER}{not json`] }, { kubelet, node: `${NS}-kubelet` });
    const response = await answer;
    expect(response.status).toBe(503);
    expect((await errorOf(response)).message).toContain('deadline');
    expect(await filesJobs(name)).toEqual([]);
    expect(deps.captured.lines().some((l) => l.msg === 'a world file job ended without a result line')).toBe(true);
  });

});

const STAND_IN_NS = 'felis';

/** What a real API server cannot be made to do on cue: refuse a create, or fail reads for a while (503). */
describe('world file routes on Kubernetes while the API fails (API stand-in)', () => {
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
  const { setUp, filesJobs, createdJob, playPod } = filesWorld(() => ({
    client,
    namespace: STAND_IN_NS,
    jobs: async () => standIn.list('jobs') as KubeObject[],
    getJob: async (name) => standIn.get('jobs', STAND_IN_NS, name),
    endJob: async (name, end) => standIn.endJob(STAND_IN_NS, name, end),
  }));

  it('answers 503 when the cluster refuses the Job, and holds no lock afterwards', async () => {
    const { external, owner, base, q, deps, name } = await setUp();
    standIn.failNext('POST', `/apis/batch/v1/namespaces/${STAND_IN_NS}/jobs`, 503);
    const response = await external.request(`${base}/file${q('a.txt')}`, jsonRequest('PUT', { content: b64('x') }, owner.headers));
    expect(response.status).toBe(503);
    expect((await errorOf(response)).code).toBe('unavailable');
    expect(deps.captured.lines().some((l) => l.msg === 'the cluster refused a world file job')).toBe(true);
    expect(await deps.database.db.select().from(leases).where(eq(leases.key, `world:${name}`))).toEqual([]);
  });

  it('reads the Job again while the API fails for a while', async () => {
    const setup = await setUp();
    const { owner, base, name } = setup;
    const answer = Promise.resolve(setup.external.request(`${base}/files`, { headers: owner.headers }));
    const job = await createdJob(name);
    standIn.failNext('GET', `/apis/batch/v1/namespaces/${STAND_IN_NS}/jobs/${job.metadata.name}`, 503, 2);
    standIn.failNext('GET', `/api/v1/namespaces/${STAND_IN_NS}/pods`, 503, 2);
    await playPod(setup);
    expect((await answer).status).toBe(200);
    expect(await filesJobs(name)).toEqual([]);
  });
});
