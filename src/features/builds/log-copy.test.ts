import { asc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { CoreV1Api, type V1ContainerStatus } from '@kubernetes/client-node';
import { FakeKubelet } from '../../../test/helpers/fake-kubelet.js';
import { PlayedCluster, realApiServer, useApiNamespace } from '../../../test/helpers/kube-api.js';
import { createUser } from '../../../test/helpers/sessions.js';
import { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { Leadership } from '../../coordination/index.js';
import { buildLogLines, builds } from '../../db/schema/builds.js';
import { BuildLogCopier, type BuildLogCopyOptions } from './log-copy.js';
import { insertBuild, moveBuild } from './service.js';

/** How long a copy may take to settle: rounds run every 20 ms, but a loaded machine is slow. */
const SETTLE = { timeout: 15_000, interval: 20 };
const STEPS = { init: ['fetch', 'build', 'scan'], main: ['report'] };

/** A replica's lead as the copier sees it, held while `leads` says so. */
const leadsWhile = (leads: () => boolean): BuildLogCopyOptions['leadership'] => ({ acquire: async () => leads(), holds: leads, release: async () => undefined });

/**
 * On the run's real API server: the build pod is bound to a node whose kubelet is a FakeKubelet, so
 * each step's log is read through the API server's log proxy; the test writes the pod's container
 * statuses as the kubelet would.
 */
describe.skipIf(!realApiServer())('copying a build pod’s steps into the build log (Kubernetes)', () => {
  const database = useTestDatabase();
  const api = useApiNamespace('felis-logs');
  let NS: string;
  let core: CoreV1Api;
  let kubelet: FakeKubelet;
  let cluster: KubernetesCluster;
  let deps: TestDeps;
  const copiers: BuildLogCopier[] = [];

  beforeAll(async () => {
    const { kubeConfig: admin } = api();
    ({ namespace: NS } = api());
    core = admin.makeApiClient(CoreV1Api);
    await new PlayedCluster(admin, NS).prepareNamespace();
    kubelet = await FakeKubelet.start();
    await kubelet.registerNode(admin, `${NS}-kubelet`);
    cluster = new KubernetesCluster({ kubeConfig: admin, namespace: NS });
    deps = createTestDeps(database());
  });

  afterEach(async () => {
    await Promise.all(copiers.splice(0).map((copier) => copier.stop()));
  });

  afterAll(async () => {
    await cluster?.close();
    await kubelet?.close();
    await core?.deleteNode({ name: `${NS}-kubelet` }).catch(() => undefined);
  });

  function copier(options: Partial<BuildLogCopyOptions> = {}): BuildLogCopier {
    const started = new BuildLogCopier(deps, { jobs: cluster.builds, leadership: leadsWhile(() => true), pollMs: 20, batchMs: 10, ...options });
    started.start();
    copiers.push(started);
    return started;
  }

  /** A building build with its Job's pod, every step waiting. */
  async function buildWithPod() {
    const user = await createUser(deps, { role: 'admin' });
    const row = await insertBuild(deps, deps.database.db, { imageRef: 'registry.felis.test/felis/x:1', requestedBy: user.id, dockerfile: 'FROM scratch' });
    const pod = `felis-build-${row.id.slice(0, 8)}-abcde`;
    await deps.database.db.update(builds).set({ jobName: `felis-build-${row.id.slice(0, 8)}` }).where(eq(builds.id, row.id));
    await moveBuild(deps, row.id, 'building');
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: pod, labels: { 'felis.dev/build-id': row.id } },
        spec: {
          nodeName: `${NS}-kubelet`,
          automountServiceAccountToken: false,
          restartPolicy: 'Never',
          initContainers: STEPS.init.map((name) => ({ name, image: 'x' })),
          containers: STEPS.main.map((name) => ({ name, image: 'x' })),
        },
      },
    });
    for (const step of [...STEPS.init, ...STEPS.main]) kubelet.setState(NS, pod, step, 'waiting');
    let second = 0;
    const write = (step: string, ...lines: string[]) => {
      for (const line of lines) kubelet.appendLog(NS, pod, step, line, new Date(Date.UTC(2026, 10, 23, 12, 0, second++)));
    };
    /** The kubelet's part: one step starts running or ends with an exit code, in the pod's status. */
    const state = async (step: string, next: 'running' | { exitCode: number }) => {
      const current = await core.readNamespacedPod({ name: pod, namespace: NS });
      const field = STEPS.init.includes(step) ? 'initContainerStatuses' : 'containerStatuses';
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      const entry: V1ContainerStatus = {
        name: step,
        image: 'x',
        imageID: '',
        ready: false,
        restartCount: 0,
        state:
          next === 'running'
            ? { running: { startedAt: now } }
            : { terminated: { exitCode: next.exitCode, reason: next.exitCode === 0 ? 'Completed' : 'Error', finishedAt: now } },
      };
      const status = current.status ?? {};
      status[field] = [...(status[field] ?? []).filter((c) => c.name !== step), entry];
      status.phase ??= 'Running';
      current.status = status;
      await core.replaceNamespacedPodStatus({ name: pod, namespace: NS, body: current });
      kubelet.setState(NS, pod, step, next === 'running' ? 'running' : 'terminated');
    };
    return { id: row.id, pod, write, state };
  }

  const storedLog = async (id: string) =>
    (await deps.database.db.select().from(buildLogLines).where(eq(buildLogLines.buildId, id)).orderBy(asc(buildLogLines.seq))).map((row) => row.line);

  it('copies every step in order, following the running one, with the step’s name and the runtime’s time', async () => {
    const build = await buildWithPod();
    build.write('fetch', 'fetching context', 'context ok');
    await build.state('fetch', { exitCode: 0 });
    await build.state('build', 'running');
    build.write('build', 'STEP 1/2: FROM scratch');
    copier();
    await vi.waitFor(async () => expect(await storedLog(build.id)).toEqual(['[fetch] fetching context', '[fetch] context ok', '[build] STEP 1/2: FROM scratch']), SETTLE);

    build.write('build', 'STEP 2/2: COPY . /', 'built\rimage.tar written');
    await vi.waitFor(async () => expect((await storedLog(build.id)).length).toBe(6), SETTLE);
    await build.state('build', { exitCode: 0 });
    await build.state('scan', 'running');
    build.write('scan', '0 vulnerabilities');
    await build.state('scan', { exitCode: 0 });
    await build.state('report', 'running');
    build.write('report', 'succeeded');
    await build.state('report', { exitCode: 0 });
    await vi.waitFor(
      async () =>
        expect(await storedLog(build.id)).toEqual([
          '[fetch] fetching context',
          '[fetch] context ok',
          '[build] STEP 1/2: FROM scratch',
          '[build] STEP 2/2: COPY . /',
          '[build] built',
          '[build] image.tar written',
          '[scan] 0 vulnerabilities',
          '[report] succeeded',
        ]),
      SETTLE,
    );
    const [first] = await deps.database.db.select().from(buildLogLines).where(eq(buildLogLines.buildId, build.id)).orderBy(asc(buildLogLines.seq)).limit(1);
    expect(first?.at.toISOString()).toBe('2026-11-23T12:00:00.000Z');
  });

  it('stores each line once when two replicas copy at the same time, and a new copier resumes where the last stopped', async () => {
    const build = await buildWithPod();
    await build.state('fetch', 'running');
    build.write('fetch', ...Array.from({ length: 50 }, (_, i) => `line ${i}`));
    const first = copier({ batchLines: 7 });
    copier({ batchLines: 3 });
    await vi.waitFor(async () => expect((await storedLog(build.id)).length).toBe(50), SETTLE);
    await first.stop();
    build.write('fetch', 'after the first stopped');
    await build.state('fetch', { exitCode: 0 });
    copier();
    await vi.waitFor(async () => expect((await storedLog(build.id)).at(-1)).toBe('[fetch] after the first stopped'), SETTLE);
    const lines = await storedLog(build.id);
    expect(lines).toEqual([...Array.from({ length: 50 }, (_, i) => `[fetch] line ${i}`), '[fetch] after the first stopped']);
  });

  it('copies nothing on a replica that does not lead', async () => {
    const build = await buildWithPod();
    build.write('fetch', 'hello');
    await build.state('fetch', { exitCode: 0 });
    let leads = false;
    const standby = copier({ leadership: leadsWhile(() => leads) });
    await standby.round();
    await new Promise((resolve) => setTimeout(resolve, 100)); // rounds keep running; none may copy
    expect(await storedLog(build.id)).toEqual([]);
    leads = true;
    await vi.waitFor(async () => expect(await storedLog(build.id)).toEqual(['[fetch] hello']), SETTLE);
  });

  it('copies on one replica at a time: the one that holds the build_logs lead', async () => {
    const build = await buildWithPod();
    build.write('fetch', 'hello');
    await build.state('fetch', { exitCode: 0 });
    const looked = new Set<string>();
    const replica = (name: string) =>
      copier({
        jobs: { newestPod: (id) => (looked.add(name), cluster.builds.newestPod(id)), stepLog: (...args) => cluster.builds.stepLog(...args) },
        leadership: new Leadership({ db: deps.database.db, clock: deps.clock, replica: name }, { name: 'build_logs' }),
      });
    replica('felis-0');
    replica('felis-1');
    await vi.waitFor(async () => expect(await storedLog(build.id)).toEqual(['[fetch] hello']), SETTLE);
    expect(looked.size).toBe(1);
  });

  it('stops looking at a failed build once the steps that ran are stored', async () => {
    const build = await buildWithPod();
    build.write('fetch', 'context sha256 does not match');
    await build.state('fetch', { exitCode: 1 });
    await moveBuild(deps, build.id, 'failed', { error: 'the build job failed: BackoffLimitExceeded' });
    const listPods = vi.spyOn(cluster, 'listPods');
    const running = copier();
    await vi.waitFor(async () => expect(await storedLog(build.id)).toEqual(['[fetch] context sha256 does not match']), SETTLE);
    await running.round();
    const calls = listPods.mock.calls.filter(([selector]) => selector.includes(build.id)).length;
    await running.round();
    await running.round();
    expect(listPods.mock.calls.filter(([selector]) => selector.includes(build.id)).length).toBe(calls);
    listPods.mockRestore();
  });

  it('lets go of a cancelled build whose pod is gone', async () => {
    const build = await buildWithPod();
    await build.state('fetch', 'running');
    build.write('fetch', 'fetching');
    copier();
    await vi.waitFor(async () => expect(await storedLog(build.id)).toEqual(['[fetch] fetching']), SETTLE);
    await moveBuild(deps, build.id, 'cancelled');
    await core.deleteNamespacedPod({ name: build.pod, namespace: NS, gracePeriodSeconds: 0 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await storedLog(build.id)).toEqual(['[fetch] fetching']);
    expect(deps.captured.lines().filter((line) => line.level === 'warn' && String(line.msg).startsWith('build log copy'))).toEqual([]);
  });
});
