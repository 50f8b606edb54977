import { describe, expect, it } from 'vitest';
import { CONTENT_PARTS_ENV, contentFromEnv } from '../world-file-protocol.js';
import { FILES_CONTAINER, fileJobManifest, filesJobName } from './world-files.js';

const NS = 'felis';
const OP_ID = '0b6f8f8e-5f0c-4d5e-9a4b-3c2d1e0f9a8b';

type Container = { name: string; args: string[]; env?: Array<{ name: string; value: string }>; envFrom?: unknown; volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }> };
type PodSpec = { containers: Container[]; volumes: Array<{ name: string; persistentVolumeClaim?: { claimName: string; readOnly?: boolean } }>; automountServiceAccountToken: boolean; securityContext: Record<string, unknown> };
const podSpecOf = (job: ReturnType<typeof fileJobManifest>) => (job.spec as { template: { spec: PodSpec } }).template.spec;

describe('the file Job manifest', () => {
  const options = { namespace: NS, image: 'ghcr.io/felis/control-plane:4.1.0' };

  it('mounts the claim read-only for a listing, carries no Secret and no token, and passes values as separate arguments', () => {
    const job = fileJobManifest('alpha', OP_ID, { op: 'list', path: 'a b/$(rm -rf ~)' }, undefined, options);
    const pod = podSpecOf(job);
    const container = pod.containers[0]!;
    expect(job.metadata).toMatchObject({ name: 'felis-files-alpha-0b6f8f8e', namespace: NS, labels: { 'felis.dev/files-op': OP_ID, 'felis.dev/world-server': 'alpha', 'felis.dev/files-mode': 'list' } });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 60 });
    expect(pod.volumes).toEqual([{ name: 'world', persistentVolumeClaim: { claimName: 'world-alpha-0', readOnly: true } }]);
    expect(container.volumeMounts).toEqual([{ name: 'world', mountPath: '/data', readOnly: true }]);
    expect(container).toMatchObject({ name: FILES_CONTAINER, image: options.image, command: ['node', 'dist/cli/world-job.js'] });
    expect(container.args).toEqual(['files', 'list', '--folder', '/data', '--path', 'a b/$(rm -rf ~)']);
    expect(container.envFrom).toBeUndefined();
    expect(pod).toMatchObject({ automountServiceAccountToken: false, securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 } });
    expect(container).toMatchObject({ securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } }, resources: { limits: { memory: '256Mi' } } });
  });

  it('mounts read-write for a write and carries its content in base64 chunks each under 128 KiB', () => {
    const content = Buffer.alloc(256 * 1024, 7);
    const job = fileJobManifest('alpha', OP_ID, { op: 'write', path: 'a.txt', expectSha256: 'a'.repeat(64) }, content, options);
    const container = podSpecOf(job).containers[0]!;
    expect(container.volumeMounts[0]!.readOnly).toBe(false);
    expect(podSpecOf(job).volumes[0]!.persistentVolumeClaim!.readOnly).toBe(false);
    expect(container.args).toEqual(['files', 'write', '--folder', '/data', '--path', 'a.txt', '--expect-sha256', 'a'.repeat(64)]);
    const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value]));
    expect(env[CONTENT_PARTS_ENV]).toBe('4');
    for (const e of container.env!) expect(Buffer.byteLength(`${e.name}=${e.value}`)).toBeLessThan(128 * 1024);
    expect(contentFromEnv(env).equals(content)).toBe(true);
  });

  it('names each operation\'s Job apart, within a label value\'s 63 characters', () => {
    expect(filesJobName('x'.repeat(63), OP_ID).length).toBeLessThanOrEqual(63);
    expect(filesJobName('ab-'.repeat(20), OP_ID)).not.toMatch(/--/);
    expect(fileJobManifest('alpha', OP_ID, { op: 'rename', path: 'a', to: 'b c' }, undefined, options).spec!.template.spec!.containers[0]!.args).toEqual([
      'files', 'rename', '--folder', '/data', '--path', 'a', '--to', 'b c',
    ]);
  });
});
