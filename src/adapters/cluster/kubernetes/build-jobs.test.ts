import type { V1Container, V1ContainerState, V1Job, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildJobManifest, DEFAULT_BUILD_JOB_OPTIONS, failedBuildOf, KubernetesBuildJobs, type BuildJobClient } from './build-jobs.js';

const options = { ...DEFAULT_BUILD_JOB_OPTIONS, namespace: 'felis', internalUrl: 'http://felis-internal.felis.svc:8081' };
const job = {
  buildId: '3f0c1f7e-58a9-4c1e-9f55-0d7a1c2b3e4f',
  imageRef: 'registry.felis.test/felis/modpacks/sub-3f0c1f7e:0123456789ab',
  contextRef: 'submissions/3f0c1f7e-58a9-4c1e-9f55-0d7a1c2b3e4f',
  contextDigest: 'a'.repeat(64),
  dockerfile: 'FROM felis/paper\nRUN echo "$(touch /pwned)"',
};

describe('the build Job', () => {
  it('fetches, builds without pushing, scans, gates, then pushes, in that order', () => {
    const manifest = buildJobManifest(job, options);
    expect(manifest.metadata?.name).toBe('felis-build-3f0c1f7e58a94c1e9f550d7a1c2b3e4f');
    expect(manifest.metadata!.name!.length).toBeLessThanOrEqual(63);
    expect(manifest.metadata?.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(manifest.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 3600 });
    const pod = manifest.spec!.template.spec!;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.initContainers!.map((c) => c.name)).toEqual(['fetch', 'build', 'scan', 'gate', 'push']);
    const build = pod.initContainers![1]!;
    expect(build.image).toMatch(/kaniko/);
    expect(build.args).toContain('--no-push');
    expect(build.args).toContain('--tar-path=/workspace/image.tar');
    const scan = pod.initContainers![2]!;
    expect(scan.image).toMatch(/trivy/);
    expect(scan.command![2]).toContain('--format json');
    expect(scan.command![2]).toContain('cyclonedx');
    expect(pod.initContainers![3]!.command![2]).toContain('"blocked":false');
  });

  it('passes every value of the build through the environment, never into a script, and the token from a Secret', () => {
    const manifest = buildJobManifest(job, options);
    const containers: V1Container[] = [...manifest.spec!.template.spec!.initContainers!, ...manifest.spec!.template.spec!.containers];
    for (const container of containers) {
      const script = container.command?.[2] ?? '';
      for (const value of [job.dockerfile, job.imageRef, job.buildId, job.contextDigest]) expect(script).not.toContain(value);
      if (container.name !== 'build') expect(container.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false });
      const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e]));
      expect(env.DOCKERFILE?.value).toBe(job.dockerfile);
      expect(env.BUILD_TOKEN?.valueFrom?.secretKeyRef).toEqual({ name: 'felis-build-token', key: 'token' });
      expect(env.BUILD_TOKEN?.value).toBeUndefined();
    }
  });

  it('creates the Job through the adapter, deletes it on cancel, and reads a failed Job back as a failed build', async () => {
    const created: V1Job[] = [];
    const deleted: string[] = [];
    const client: Pick<BuildJobClient, 'createJob' | 'deleteJob'> = {
      createJob: async (body) => (created.push(body), body),
      deleteJob: async (name) => void deleted.push(name),
    };
    const runner = new KubernetesBuildJobs(client as BuildJobClient, options);
    const { jobName } = await runner.start(job);
    expect(created).toHaveLength(1);
    expect(jobName).toBe(created[0]!.metadata!.name);
    await runner.cancel(jobName);
    expect(deleted).toEqual([jobName]);

    const failed = { ...created[0]!, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }] } } as V1Job;
    expect(failedBuildOf(failed)).toEqual({ buildId: job.buildId, reason: 'the build job failed: DeadlineExceeded (Job was active longer than specified deadline)' });
    expect(failedBuildOf(created[0]!)).toBeUndefined();
  });

  it('reads the newest pod of a build’s Job as its steps in order, each with its state', async () => {
    const pod = (name: string, created: string, states: Array<[string, V1ContainerState]>): V1Pod => ({
      metadata: { name, creationTimestamp: new Date(created) },
      spec: { initContainers: [{ name: 'fetch' }, { name: 'build' }, { name: 'scan' }], containers: [{ name: 'report' }] },
      status: { initContainerStatuses: states.map(([step, state]) => ({ name: step, state, image: 'x', imageID: 'x', ready: false, restartCount: 0 })) },
    });
    const selectors: string[] = [];
    const client: Pick<BuildJobClient, 'listPods'> = {
      listPods: async (selector) => {
        selectors.push(selector);
        return [
          pod('felis-build-old', '2026-11-23T12:00:00Z', [['fetch', { terminated: { exitCode: 1 } }]]),
          pod('felis-build-new', '2026-11-23T12:05:00Z', [
            ['fetch', { terminated: { exitCode: 0 } }],
            ['build', { running: {} }],
            ['scan', { waiting: {} }],
          ]),
        ];
      },
    };
    const jobs = new KubernetesBuildJobs(client as BuildJobClient, options);
    expect(await jobs.newestPod(job.buildId)).toEqual({
      name: 'felis-build-new',
      steps: [
        { name: 'fetch', state: 'terminated' },
        { name: 'build', state: 'running' },
        { name: 'scan', state: 'waiting' },
        { name: 'report', state: 'waiting' },
      ],
    });
    expect(selectors).toEqual([`felis.dev/build-id=${job.buildId}`]);
    expect(await new KubernetesBuildJobs({ listPods: async () => [] } as Pick<BuildJobClient, 'listPods'> as BuildJobClient, options).newestPod(job.buildId)).toBeUndefined();
  });
});
