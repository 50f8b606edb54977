import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { KubeStandIn } from '../../../test/helpers/kube-stand-in.js';
import { createUser } from '../../../test/helpers/sessions.js';
import { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { kubeConfigFor } from '../../adapters/cluster/kubernetes/kubeconfig.js';
import { buildJobWatch } from './job-watch.js';
import { findBuild, insertBuild, moveBuild } from './service.js';

describe('build Jobs that die before they report', () => {
  const database = useTestDatabase();
  let standIn: KubeStandIn;
  let cluster: KubernetesCluster;
  let deps: TestDeps;
  let watch: ReturnType<typeof buildJobWatch>;

  beforeAll(async () => {
    standIn = await KubeStandIn.start();
    cluster = new KubernetesCluster({ kubeConfig: kubeConfigFor(standIn.url), namespace: 'felis' });
    deps = createTestDeps(database());
    watch = buildJobWatch(deps, cluster.builds);
    watch.start();
  });

  afterAll(async () => {
    await watch.stop();
    await cluster.close();
    await standIn.close();
  });

  async function startedBuild() {
    const user = await createUser(deps, { role: 'admin' });
    const row = await insertBuild(deps, deps.database.db, { imageRef: 'registry.felis.test/felis/x:1', requestedBy: user.id, dockerfile: 'FROM scratch' });
    const { jobName } = await cluster.builds.start({ buildId: row.id, imageRef: row.imageRef, dockerfile: 'FROM scratch' });
    await moveBuild(deps, row.id, 'building');
    return { id: row.id, jobName };
  }

  const failJob = (name: string) => {
    const job = standIn.get('jobs', 'felis', name)!;
    standIn.put('jobs', { ...job, status: { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'too long' }] } });
  };

  it('fails the build with the reason the Job gives', async () => {
    const { id, jobName } = await startedBuild();
    failJob(jobName);
    await vi.waitFor(async () => expect((await findBuild(deps.database.db, id))?.status).toBe('failed'), { timeout: 10_000 });
    const row = await findBuild(deps.database.db, id);
    expect(row?.error).toBe('the build job failed: DeadlineExceeded (too long)');
    expect(row?.finishedAt).toBeInstanceOf(Date);
  });

  it('leaves a build that already ended as it was', async () => {
    const { id, jobName } = await startedBuild();
    await moveBuild(deps, id, 'cancelled');
    failJob(jobName);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the watch event has to arrive for anything to happen
    expect((await findBuild(deps.database.db, id))?.status).toBe('cancelled');
    expect(deps.captured.lines().filter((l) => l.msg === 'a failed build Job could not fail its build')).toEqual([]);
  });
});
