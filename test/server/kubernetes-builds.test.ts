import { BatchV1Api, CoreV1Api, type KubeConfig, type V1ContainerStatus } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningService } from '../../src/service.js';
import { TOKENS } from '../helpers/app.js';
import { FakeKubelet } from '../helpers/fake-kubelet.js';
import { applyManifest, applyServiceRbac, PlayedCluster, realApiServer, serviceAccountKubeConfig, useApiNamespace } from '../helpers/kube-api.js';
import type { CapturedLog } from '../helpers/log.js';
import { exchange } from '../helpers/real-http.js';
import { startTestService } from '../helpers/service.js';
import { createUser, signIn } from '../helpers/sessions.js';

/**
 * The whole service on `CLUSTER=kubernetes` against the run's real API server, signed in as its own
 * ServiceAccount: a build becomes a Job, the test plays the Job controller, the kubelet (a
 * FakeKubelet serves the steps' logs through the API server) and the Job's own calls, and the build
 * log shows what the steps wrote.
 */
describe.skipIf(!realApiServer())('builds on Kubernetes, through the running service', () => {
  const api = useApiNamespace('felis-svc');
  let NS: string;
  let kube: KubeConfig;
  let kubelet: FakeKubelet;
  let service: RunningService & { captured: CapturedLog };
  let internal: string;
  let admin: Record<string, string>;

  beforeAll(async () => {
    ({ kubeConfig: kube, namespace: NS } = api());
    await applyManifest(kube, 'base/crd.yaml');
    await applyServiceRbac(kube, NS);
    await new PlayedCluster(kube, NS).prepareNamespace();
    kubelet = await FakeKubelet.start();
    await kubelet.registerNode(kube, `${NS}-kubelet`);
    const kubeConfig = await vi.waitFor(() => serviceAccountKubeConfig(kube, NS), { timeout: 20_000, interval: 100 });
    service = await startTestService({ CLUSTER: 'kubernetes', KUBE_NAMESPACE: NS, POD_NAME: 'felis-0' }, { kubeConfig });
    internal = `http://127.0.0.1:${service.internal.port}`;
    const user = await createUser(service.deps, { role: 'admin' });
    // A browser on the console: its Host, and the same-origin marks a write carries.
    const { headers } = await signIn(service.deps, { userId: user.id });
    admin = { ...headers, Origin: `https://${headers.Host}`, 'Sec-Fetch-Site': 'same-origin' };
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await kubelet?.close();
    await kube?.makeApiClient(CoreV1Api).deleteNode({ name: `${NS}-kubelet` }).catch(() => undefined);
  });

  async function startBuild(tag: string): Promise<{ id: string; pod: string; job: string }> {
    const res = await exchange(service.external.port, 'POST', '/api/v1/images/build', admin, { image_ref: `registry.felis.test/felis/k8s:${tag}`, dockerfile: 'FROM scratch' });
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const job = (await kube.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `felis.dev/build-id=${id}` })).items[0];
    expect(job, 'the build runs as a Job').toBeDefined();
    // The Job controller's part: one pod from the Job's template, on the FakeKubelet's node.
    const template = job!.spec!.template;
    const pod = `${job!.metadata!.name}-x7k2p`;
    await kube.makeApiClient(CoreV1Api).createNamespacedPod({
      namespace: NS,
      body: { metadata: { name: pod, labels: template.metadata?.labels }, spec: { ...template.spec!, nodeName: `${NS}-kubelet` } },
    });
    for (const c of [...(template.spec!.initContainers ?? []), ...template.spec!.containers]) kubelet.setState(NS, pod, c.name, 'waiting');
    return { id, pod, job: job!.metadata!.name! };
  }

  const reportStatus = (id: string, status: string) =>
    fetch(`${internal}/api/v1/internal/builds/${id}/status`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.build}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ status }),
    });

  async function buildLog(id: string): Promise<string[]> {
    const res = await exchange(service.external.port, 'GET', `/api/v1/images/build/${id}/logs`, admin);
    expect(res.status).toBe(200);
    return res.text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6));
  }

  it('copies the steps the pod ran into the build log, in order', { timeout: 30_000 }, async () => {
    const build = await startBuild('1');
    const core = kube.makeApiClient(CoreV1Api);
    /** The kubelet's part: a step runs, writes its lines and ends with its exit code, in the pod's status. */
    const step = async (name: string, lines: string[], exitCode: number) => {
      kubelet.setState(NS, build.pod, name, 'running');
      for (const line of lines) kubelet.appendLog(NS, build.pod, name, line);
      const current = await core.readNamespacedPod({ name: build.pod, namespace: NS });
      const field = current.spec?.initContainers?.some((c) => c.name === name) ? 'initContainerStatuses' : 'containerStatuses';
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      const entry: V1ContainerStatus = { name, image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt: now } } };
      const status = current.status ?? {};
      status[field] = [...(status[field] ?? []).filter((c) => c.name !== name), entry];
      status.phase ??= 'Running';
      current.status = status;
      await core.replaceNamespacedPodStatus({ name: build.pod, namespace: NS, body: current });
      kubelet.setState(NS, build.pod, name, 'terminated');
    };
    await step('fetch', ['context fetched'], 0);
    expect((await reportStatus(build.id, 'building')).status).toBe(204);
    await step('build', ['INFO[0000] Retrieving image manifest scratch', 'INFO[0001] Built cross stage deps'], 0);
    await step('scan', ['2026-11-23T12:00:00Z INFO Vulnerability scanning is enabled'], 0);
    await step('gate', ['{"blocked":true}'], 1);
    expect((await reportStatus(build.id, 'failed')).status).toBe(204);
    await vi.waitFor(
      async () =>
        expect(await buildLog(build.id)).toEqual([
          '[fetch] context fetched',
          '[build] INFO[0000] Retrieving image manifest scratch',
          '[build] INFO[0001] Built cross stage deps',
          '[scan] 2026-11-23T12:00:00Z INFO Vulnerability scanning is enabled',
          '[gate] {"blocked":true}',
        ]),
      { timeout: 20_000, interval: 250 },
    );
  });

  it('fails a build whose Job died before it reported', { timeout: 30_000 }, async () => {
    const build = await startBuild('2');
    const batch = kube.makeApiClient(BatchV1Api);
    const job = await batch.readNamespacedJob({ name: build.job, namespace: NS });
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    await batch.replaceNamespacedJobStatus({
      name: build.job,
      namespace: NS,
      body: { ...job, status: { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'past 3600 s', lastProbeTime: now, lastTransitionTime: now }] } },
    });
    await vi.waitFor(
      async () => {
        const res = await exchange(service.external.port, 'GET', `/api/v1/images/build/${build.id}`, admin);
        expect(res.body).toMatchObject({ status: 'failed', error: 'the build job failed: DeadlineExceeded (past 3600 s)' });
      },
      { timeout: 20_000, interval: 250 },
    );
  });
});
