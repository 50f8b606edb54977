import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeKubelet } from '../../../test/helpers/fake-kubelet.js';
import { PlayedCluster, realApiServer, useApiNamespace } from '../../../test/helpers/kube-api.js';
import { captureLog } from '../../../test/helpers/log.js';
import { SseReader, type SseEvent } from '../../../test/helpers/sse.js';
import { KubernetesCluster, podName } from '../../adapters/cluster/kubernetes/adapter.js';
import { SERVER_CONTAINER } from '../../adapters/cluster/kubernetes/workloads.js';
import { ManualClock } from '../../lib/clock.js';
import { resumePosition } from './event-ids.js';
import { LogHubs, RESUME_WINDOW_MS } from './log-hub.js';
import { consoleSse } from './sse.js';

/**
 * The console's line ids on Kubernetes: the pod's log is read through the run's real API server
 * from a FakeKubelet (nanosecond stamps, whole-second `sinceTime`), by two replicas, each with
 * its own adapter and hubs. A line gets the same id on both, so a stream cut on one resumes on
 * the other exactly after the client's last line.
 */
describe.skipIf(!realApiServer())('console stream ids through the API server (two replicas)', () => {
  const api = useApiNamespace('felis-console');
  const SERVER = 'gamma';
  const clock = new ManualClock('2026-06-01T12:00:00.000Z');
  const second = Math.floor(clock.now().getTime() / 1000);
  let NS: string;
  let core: CoreV1Api;
  let kubelet: FakeKubelet;
  const clusters: KubernetesCluster[] = [];

  beforeAll(async () => {
    const { kubeConfig: admin, namespace } = api();
    NS = namespace;
    core = admin.makeApiClient(CoreV1Api);
    await new PlayedCluster(admin, NS).prepareNamespace();
    kubelet = await FakeKubelet.start();
    await kubelet.registerNode(admin, `${NS}-kubelet`);
    await core.createNamespacedPod({
      namespace: NS,
      body: { metadata: { name: podName(SERVER) }, spec: { nodeName: `${NS}-kubelet`, automountServiceAccountToken: false, containers: [{ name: SERVER_CONTAINER, image: 'x' }] } },
    });
    for (let i = 0; i < 2; i++) clusters.push(new KubernetesCluster({ kubeConfig: admin, namespace: NS }));
  });

  afterAll(async () => {
    for (const cluster of clusters) await cluster.close();
    await kubelet?.close();
    await core?.deleteNode({ name: `${NS}-kubelet` }).catch(() => undefined);
  });

  /** One replica's console hubs, on its own adapter. */
  const replica = (at: number) => new LogHubs({ cluster: clusters[at]!, clock, log: captureLog().log });
  const write = (line: string, ms: number) => kubelet.appendLog(NS, podName(SERVER), SERVER_CONTAINER, line, new Date(second * 1000 + ms));
  /** A viewer's stream on `hubs`, resumed after `lastEventId` when given. */
  async function view(hubs: LogHubs, lastEventId?: string): Promise<SseReader> {
    const hub = hubs.hub(SERVER);
    await hub.ready;
    const resumeAfter = resumePosition(lastEventId, clock.now().getTime(), RESUME_WINDOW_MS);
    return new SseReader(
      consoleSse({ hub, ...(resumeAfter ? { resumeAfter } : {}), timings: hubs.timings, recheck: async () => 'allowed', onClose: () => undefined }),
    );
  }
  const lines = (events: SseEvent[]) => events.map(({ id, data }) => ({ id, data }));

  it('numbers the lines of a second alike on both replicas, and resumes on B exactly after the line A sent last', async () => {
    write('boot', -5_000);
    for (let i = 0; i < 3; i++) write(`x${i}`, 100 + i);
    const a = replica(0);
    const b = replica(1);
    const onA = await view(a);
    await onA.until((r) => r.messages().length === 4, 10_000);
    // B's hub begins inside the second: its follow starts at the second's start and skips what it read.
    const onB = await view(b);
    await onB.until((r) => r.messages().length === 4, 10_000);

    a.close();
    await onA.until((r) => r.ended);
    for (let i = 3; i < 6; i++) write(`x${i}`, 100 + i);
    write('y0', 1_000);
    await onB.until((r) => r.messages().length === 8, 10_000);
    const full = lines(onB.messages());
    expect(full).toEqual([
      { id: `${second - 5}.000000`, data: 'boot' },
      ...[0, 1, 2, 3, 4, 5].map((i) => ({ id: `${second}.00000${i}`, data: `x${i}` })),
      { id: `${second + 1}.000000`, data: 'y0' },
    ]);
    const seenOnA = lines(onA.messages());
    expect(seenOnA).toEqual(full.slice(0, 4));

    // Resumed on B (its running hub, then a hub of a new life) after each line of the second A was cut in.
    for (const hubs of [b, replica(1)]) {
      for (let at = 1; at <= 3; at++) {
        const resumed = await view(hubs, full[at]!.id);
        await resumed.until((r) => r.messages().length >= full.length - at - 1, 10_000);
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect([...full.slice(0, at + 1), ...lines(resumed.messages())], `after ${full[at]!.id}`).toEqual(full);
        await resumed.cancel();
      }
    }
    // An older client's whole second: from the first line of that second.
    const whole = await view(b, String(second));
    await whole.until((r) => r.messages().length >= 7, 10_000);
    expect(lines(whole.messages())).toEqual(full.slice(1));
    await whole.cancel();
    await onB.cancel();
    b.close();
  });
});
