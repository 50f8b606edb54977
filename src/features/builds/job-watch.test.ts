import { BatchV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { applyServiceRbac, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../../../test/helpers/kube-api.js';
import { createUser } from '../../../test/helpers/sessions.js';
import { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { buildJobWatch } from './job-watch.js';
import { findBuild, insertBuild, moveBuild } from './service.js';

/** On the run's real API server, as the service's own ServiceAccount; the test plays the Job controller. */
describe.skipIf(!realApiServer())('build Jobs that die before they report', () => {
  const database = useTestDatabase();
  const api = useApiNamespace('felis-builds');
  let cluster: KubernetesCluster;
  let deps: TestDeps;
  let watch: ReturnType<typeof buildJobWatch>;
  let failJob: (name: string) => Promise<void>;

  beforeAll(async () => {
    const { kubeConfig: admin, namespace } = api();
    await applyServiceRbac(admin, namespace);
    const kubeConfig = await vi.waitFor(() => serviceAccountKubeConfig(admin, namespace), { timeout: 20_000, interval: 100 });
    cluster = new KubernetesCluster({ kubeConfig, namespace });
    await vi.waitFor(() => cluster.listJobs('felis.dev/none'), { timeout: 20_000, interval: 100 });
    deps = createTestDeps(database());
    watch = buildJobWatch(deps, cluster.builds);
    watch.start();
    const batch = admin.makeApiClient(BatchV1Api);
    failJob = async (name) => {
      const job = await batch.readNamespacedJob({ name, namespace });
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      await batch.replaceNamespacedJobStatus({
        name,
        namespace,
        body: { ...job, status: { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'too long', lastProbeTime: now, lastTransitionTime: now }] } },
      });
    };
  });

  afterAll(async () => {
    await watch?.stop();
    await cluster?.close();
  });

  async function startedBuild() {
    const user = await createUser(deps, { role: 'admin' });
    const row = await insertBuild(deps, deps.database.db, { imageRef: 'registry.felis.test/felis/x:1', requestedBy: user.id, dockerfile: 'FROM scratch' });
    const { jobName } = await cluster.builds.start({ buildId: row.id, imageRef: row.imageRef, dockerfile: 'FROM scratch' });
    await moveBuild(deps, row.id, 'building');
    return { id: row.id, jobName };
  }

  it('fails the build with the reason the Job gives', async () => {
    const { id, jobName } = await startedBuild();
    await failJob(jobName);
    await vi.waitFor(async () => expect((await findBuild(deps.database.db, id))?.status).toBe('failed'), { timeout: 10_000 });
    const row = await findBuild(deps.database.db, id);
    expect(row?.error).toBe('the build job failed: DeadlineExceeded (too long)');
    expect(row?.finishedAt).toBeInstanceOf(Date);
  });

  it('leaves a build that already ended as it was', async () => {
    const { id, jobName } = await startedBuild();
    await moveBuild(deps, id, 'cancelled');
    await failJob(jobName);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the watch event has to arrive for anything to happen
    expect((await findBuild(deps.database.db, id))?.status).toBe('cancelled');
    expect(deps.captured.lines().filter((l) => l.msg === 'a failed build Job could not fail its build')).toEqual([]);
  });
});
