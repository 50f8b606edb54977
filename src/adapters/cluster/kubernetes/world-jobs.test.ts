import { describe, expect, it } from 'vitest';
import type { WorldJobPlan } from '../world-jobs.js';
import { planOf, stepArgs, WORLD_JOB_CONTAINER, worldJobManifest } from './world-jobs.js';

const NS = 'felis';
const JOB_ID = '0b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b';

describe('the world Job manifest', () => {
  const plan: WorldJobPlan = {
    jobId: JOB_ID,
    serverName: 'alpha',
    kind: 'restore',
    step: { op: 'restore', key: 'worlds/alpha/x.tar.gz', sha256: 'a'.repeat(64), snapshotKey: 'worlds/alpha/y.tar.gz' },
    backupId: '1b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b',
    snapshot: { backupId: '2b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b', jobId: '3b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b' },
  };
  const job = worldJobManifest(plan, { namespace: NS, image: 'ghcr.io/felis/control-plane:4.1.0', storeSecret: 'felis-backup-store', deadlineSeconds: 3600 });
  const pod = job.spec!.template.spec!;
  const container = pod.containers[0]!;

  it('mounts the server\'s world claim and runs the service\'s own image with the CLI, its values as separate arguments', () => {
    expect(job.metadata).toMatchObject({ name: 'felis-world-alpha', namespace: NS, labels: { 'felis.dev/world-job': JOB_ID, 'felis.dev/world-server': 'alpha' } });
    expect(pod.volumes).toContainEqual({ name: 'world', persistentVolumeClaim: { claimName: 'world-alpha-0' } });
    expect(container).toMatchObject({ name: WORLD_JOB_CONTAINER, image: 'ghcr.io/felis/control-plane:4.1.0', command: ['node', 'dist/cli/world-job.js'] });
    expect(container.args).toEqual(['restore', '--folder', '/data', '--tag', JOB_ID, '--key', 'worlds/alpha/x.tar.gz', '--sha256', 'a'.repeat(64), '--snapshot-key', 'worlds/alpha/y.tar.gz']);
    expect(container.volumeMounts).toContainEqual({ name: 'world', mountPath: '/data' });
  });

  it('gets the store from its Secret, runs unprivileged with a deadline and limits, and reports by termination message', () => {
    expect(container.envFrom).toEqual([{ secretRef: { name: 'felis-backup-store' } }]);
    expect(JSON.stringify(job)).not.toMatch(/SECRET_ACCESS_KEY|DATABASE_URL|SERVICE_TOKEN/);
    expect(pod).toMatchObject({ restartPolicy: 'Never', automountServiceAccountToken: false, securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 } });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.resources?.limits).toMatchObject({ memory: '1Gi' });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 3600 });
    expect(container).toMatchObject({ terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
  });

  it('carries its plan, so any replica can settle it; a tampered plan is not a world job', () => {
    expect(planOf(job)).toEqual(plan);
    const other = structuredClone(job);
    other.metadata!.labels!['felis.dev/world-job'] = '4b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b';
    expect(planOf(other)).toBeUndefined();
    other.metadata!.annotations!['felis.dev/world-job-plan'] = '{not json';
    expect(planOf(other)).toBeUndefined();
  });

  it('passes an export path as one argument, never through a shell', () => {
    expect(stepArgs({ op: 'export', key: 'exports/t', path: 'a b/$(rm -rf)' }, '/data', 't')).toEqual([
      'export', '--folder', '/data', '--tag', 't', '--key', 'exports/t', '--path', 'a b/$(rm -rf)',
    ]);
  });
});
