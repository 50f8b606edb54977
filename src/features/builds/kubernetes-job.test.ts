import type { V1Container, V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildJobManifest, DEFAULT_BUILD_JOB_OPTIONS, failedBuildOf, KubernetesBuildRunner, type JobClient } from './kubernetes-job.js';
import type { BuildReporter } from './runner.js';

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
    const jobs: JobClient = {
      createJob: async (body) => (created.push(body), body),
      deleteJob: async (name) => void deleted.push(name),
    };
    const runner = new KubernetesBuildRunner({ jobs, ...options });
    const { jobName } = await runner.start(job, {} as BuildReporter);
    expect(created).toHaveLength(1);
    expect(jobName).toBe(created[0]!.metadata!.name);
    await runner.cancel(jobName);
    expect(deleted).toEqual([jobName]);

    const failed = { ...created[0]!, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }] } } as V1Job;
    expect(failedBuildOf(failed)).toEqual({ buildId: job.buildId, reason: 'the build job failed: DeadlineExceeded (Job was active longer than specified deadline)' });
    expect(failedBuildOf(created[0]!)).toBeUndefined();
  });
});
