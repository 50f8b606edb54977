import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { kubeConfigFor } from '../../src/adapters/cluster/kubernetes/kubeconfig.js';
import { DEFAULT_CRD } from '../../src/adapters/cluster/kubernetes/resource.js';
import type { RunningService } from '../../src/service.js';
import { TOKENS } from '../helpers/app.js';
import type { CapturedLog } from '../helpers/log.js';
import { KubeStandIn } from '../helpers/kube-stand-in.js';
import { exchange } from '../helpers/real-http.js';
import { startTestService } from '../helpers/service.js';
import { createUser, signIn } from '../helpers/sessions.js';

const NS = 'felis';

/**
 * The whole service on `CLUSTER=kubernetes` against the API stand-in: a build becomes a Job, the
 * test plays the kubelet and the Job's own calls, and the build log shows what the steps wrote.
 */
describe('builds on Kubernetes, through the running service', () => {
  let standIn: KubeStandIn;
  let service: RunningService & { captured: CapturedLog };
  let internal: string;
  let admin: Record<string, string>;

  beforeAll(async () => {
    standIn = await KubeStandIn.start();
    standIn.defineCustomResource(DEFAULT_CRD.group, DEFAULT_CRD.version, DEFAULT_CRD.plural, 'MinecraftServer');
    service = await startTestService({ CLUSTER: 'kubernetes', KUBE_NAMESPACE: NS, POD_NAME: 'felis-0' }, { kubeConfig: kubeConfigFor(standIn.url) });
    internal = `http://127.0.0.1:${service.internal.port}`;
    const user = await createUser(service.deps, { role: 'admin' });
    // A browser on the console: its Host, and the same-origin marks a write carries.
    const { headers } = await signIn(service.deps, { userId: user.id });
    admin = { ...headers, Origin: `https://${headers.Host}`, 'Sec-Fetch-Site': 'same-origin' };
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await standIn?.close();
  });

  async function startBuild(tag: string): Promise<{ id: string; pod: string; job: string }> {
    const res = await exchange(service.external.port, 'POST', '/api/v1/images/build', admin, { image_ref: `registry.felis.test/felis/k8s:${tag}`, dockerfile: 'FROM scratch' });
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const job = standIn.list('jobs').find((j) => j.metadata.labels?.['felis.dev/build-id'] === id);
    expect(job, 'the build runs as a Job').toBeDefined();
    // The Job controller's part: one pod from the Job's template.
    const template = (job!.spec as { template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> } }).template;
    const pod = `${job!.metadata.name}-x7k2p`;
    standIn.put('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod, namespace: NS, labels: template.metadata.labels }, spec: template.spec, status: { phase: 'Pending' } });
    return { id, pod, job: job!.metadata.name };
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
    const step = (name: string, lines: string[], exitCode: number) => {
      standIn.setContainerState(NS, build.pod, name, 'running');
      for (const line of lines) standIn.appendLog(NS, build.pod, line, new Date(), name);
      standIn.setContainerState(NS, build.pod, name, { exitCode });
    };
    step('fetch', ['context fetched'], 0);
    expect((await reportStatus(build.id, 'building')).status).toBe(204);
    step('build', ['INFO[0000] Retrieving image manifest scratch', 'INFO[0001] Built cross stage deps'], 0);
    step('scan', ['2026-11-23T12:00:00Z INFO Vulnerability scanning is enabled'], 0);
    step('gate', ['{"blocked":true}'], 1);
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
    const job = standIn.get('jobs', NS, build.job)!;
    standIn.put('jobs', { ...job, status: { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'past 3600 s' }] } });
    await vi.waitFor(
      async () => {
        const res = await exchange(service.external.port, 'GET', `/api/v1/images/build/${build.id}`, admin);
        expect(res.body).toMatchObject({ status: 'failed', error: 'the build job failed: DeadlineExceeded (past 3600 s)' });
      },
      { timeout: 20_000, interval: 250 },
    );
  });
});
