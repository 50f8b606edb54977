import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KubeStandIn } from '../../../../test/helpers/kube-stand-in.js';
import { ClusterNoPodError, ClusterNotFoundError, type PodLogLine } from '../types.js';
import { KubernetesCluster, podName } from './adapter.js';
import { kubeConfigFor } from './kubeconfig.js';
import { parseStampedLine } from './pod-log.js';
import { DEFAULT_CRD } from './resource.js';

/**
 * What a real API server cannot be made to show here (adapter.test.ts has the rest): a 409 it gives
 * up on, injected, and a container's followed log, which needs a kubelet this machine has not got.
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

async function collect<T>(lines: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

describe('Kubernetes adapter against the API stand-in (faults a real server cannot be made to show)', () => {
  it('sends a merge patch again when the API server answers 409', async () => {
    await cluster.createServer({ name: 'alpha', subdomain: 'alpha', labels: {}, image: 'reg/mc@sha256:' + 'a'.repeat(64) });
    standIn.failNext('PATCH', `/apis/felis.dev/v1alpha1/namespaces/${NS}/minecraftservers/alpha`, 409, 2);
    const patched = await cluster.setDesiredState('alpha', 'Running');
    expect(patched.spec.desiredState).toBe('Running');
    expect(standIn.get('minecraftservers', NS, 'alpha')!.spec!.desiredState).toBe('Running');
    await expect(cluster.setDesiredState('ghost', 'Running')).rejects.toBeInstanceOf(ClusterNotFoundError);
  });

  it('streams pod logs with their timestamps, from sinceTime, following new lines', async () => {
    const pod = podName('alpha');
    const signal = new AbortController().signal;
    standIn.put('pods', { metadata: { name: pod, namespace: NS }, status: { phase: 'Pending' } });
    await expect(collect(cluster.podLogs('alpha', { follow: false, signal }))).rejects.toBeInstanceOf(ClusterNoPodError); // ContainerCreating
    await expect(collect(cluster.podLogs('nobody', { follow: false, signal }))).rejects.toBeInstanceOf(ClusterNoPodError);
    standIn.setPodReady(NS, pod, true);
    standIn.appendLog(NS, pod, 'Starting minecraft server', new Date('2026-01-01T00:00:00.100Z'));
    standIn.appendLog(NS, pod, 'Done (3.2s)! For help, type "help"', new Date('2026-01-01T00:00:01.250Z'));
    const abort = new AbortController();
    const seen: PodLogLine[] = [];
    const reading = (async () => {
      for await (const line of cluster.podLogs('alpha', { follow: true, sinceTime: new Date('2026-01-01T00:00:01.900Z'), signal: abort.signal })) {
        seen.push(line);
        if (seen.length === 2) abort.abort();
      }
    })();
    await vi.waitFor(() => expect(seen).toHaveLength(1));
    expect(await collect(cluster.podLogs('alpha', { follow: false, signal, tailLines: 1 }))).toEqual([seen[0]]);
    standIn.appendLog(NS, pod, '<Steve> hello', new Date('2026-01-01T00:00:02.000Z'));
    await reading;
    expect(seen).toEqual([
      { time: new Date('2026-01-01T00:00:01.250Z'), line: 'Done (3.2s)! For help, type "help"' },
      { time: new Date('2026-01-01T00:00:02.000Z'), line: '<Steve> hello' },
    ]);
    // A lone carriage return (a progress bar) stays inside its stamped line.
    standIn.appendLog(NS, pod, 'Preparing spawn area: 40%\rPreparing spawn area: 80%', new Date('2026-01-01T00:00:03.000Z'));
    expect(await collect(cluster.podLogs('alpha', { follow: false, signal, tailLines: 1 }))).toEqual([
      { time: new Date('2026-01-01T00:00:03.000Z'), line: 'Preparing spawn area: 40%\rPreparing spawn area: 80%' },
    ]);
    expect(parseStampedLine('2026-01-01T00:00:00.123456789Z  two spaces')).toEqual({ time: new Date('2026-01-01T00:00:00.123Z'), line: ' two spaces' });
    expect(parseStampedLine('no stamp')).toBeUndefined();
  });
});
