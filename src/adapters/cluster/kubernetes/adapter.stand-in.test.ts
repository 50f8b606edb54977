import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeStandIn } from '../../../../test/helpers/kube-stand-in.js';
import { ClusterNotFoundError } from '../types.js';
import { KubernetesCluster } from './adapter.js';
import { kubeConfigFor } from './kubeconfig.js';
import { parseStampedLine } from './pod-log.js';
import { DEFAULT_CRD } from './resource.js';

/**
 * What a real API server cannot be made to show on cue (adapter.test.ts has the rest): a 409 it
 * gives up on, injected. Also the stamped-line parser's edge cases, which need no server.
 */
const NS = 'felis';
let standIn: KubeStandIn;
let cluster: KubernetesCluster;

beforeAll(async () => {
  standIn = await KubeStandIn.start();
  standIn.defineCustomResource(DEFAULT_CRD.group, DEFAULT_CRD.version, DEFAULT_CRD.plural, 'MinecraftServer');
  cluster = new KubernetesCluster({ kubeConfig: kubeConfigFor(standIn.url), namespace: NS });
});

afterAll(async () => {
  await cluster.close();
  await standIn.close();
});

describe('Kubernetes adapter against the API stand-in (a fault a real server cannot be made to show)', () => {
  it('parses stamped lines: a lone carriage return stays inside its line, and an unstamped line is none', () => {
    expect(parseStampedLine('2026-01-01T00:00:00.123456789Z  two spaces')).toEqual({ time: new Date('2026-01-01T00:00:00.123Z'), line: ' two spaces' });
    expect(parseStampedLine('2026-01-01T00:00:03.000000000Z Preparing spawn area: 40%\rPreparing spawn area: 80%')).toEqual({
      time: new Date('2026-01-01T00:00:03.000Z'),
      line: 'Preparing spawn area: 40%\rPreparing spawn area: 80%',
    });
    expect(parseStampedLine('no stamp')).toBeUndefined();
  });

  it('sends a merge patch again when the API server answers 409', async () => {
    await cluster.createServer({ name: 'alpha', subdomain: 'alpha', labels: {}, image: 'reg/mc@sha256:' + 'a'.repeat(64) });
    standIn.failNext('PATCH', `/apis/felis.dev/v1alpha1/namespaces/${NS}/minecraftservers/alpha`, 409, 2);
    const patched = await cluster.setDesiredState('alpha', 'Running');
    expect(patched.spec.desiredState).toBe('Running');
    expect(standIn.get('minecraftservers', NS, 'alpha')!.spec!.desiredState).toBe('Running');
    await expect(cluster.setDesiredState('ghost', 'Running')).rejects.toBeInstanceOf(ClusterNotFoundError);
  });
});
