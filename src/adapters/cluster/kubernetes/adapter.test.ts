import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KubeStandIn } from '../../../../test/helpers/kube-stand-in.js';
import { ServerCache } from '../../../features/servers/cache.js';
import { ClusterConflictError, ClusterNoPodError, ClusterNotFoundError, FORWARDING_LABEL, SYSTEM_LABEL, type PodLogLine } from '../types.js';
import { KubernetesCluster, podName } from './adapter.js';
import { kubeConfigFor } from './kubeconfig.js';
import { parseStampedLine } from './pod-log.js';
import { DEFAULT_CRD } from './resource.js';

const NS = 'felis';
let standIn: KubeStandIn;
let cluster: KubernetesCluster;

beforeAll(async () => {
  standIn = await KubeStandIn.start();
  standIn.defineCustomResource(DEFAULT_CRD.group, DEFAULT_CRD.version, DEFAULT_CRD.plural, 'MinecraftServer');
  cluster = new KubernetesCluster({
    kubeConfig: kubeConfigFor(standIn.url),
    namespace: NS,
    watchBackoffMs: { initial: 20, max: 200 },
    rconAddress: () => ({ host: '127.0.0.1', port: 1 }),
  });
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

const spec = (name: string, extra: object = {}) => ({ name, subdomain: `${name}-sub`, labels: {}, image: 'reg/mc@sha256:' + 'a'.repeat(64), memory: '2Gi', ...extra });

describe('Kubernetes adapter against the API stand-in', () => {
  it('creates a MinecraftServer with its RCON Secret, and refuses a second of the same name', async () => {
    const created = await cluster.createServer(spec('alpha', { displayName: 'Alpha', autostartPolicy: 'public' }));
    expect(created.spec).toMatchObject({ name: 'alpha', subdomain: 'alpha-sub', displayName: 'Alpha', desiredState: 'Stopped', autostartPolicy: 'public' });
    expect(created.status).toMatchObject({ phase: 'Stopped', ready: false, idleStopSeconds: 900 });
    const object = standIn.get('minecraftservers', NS, 'alpha')!;
    expect(object).toMatchObject({ apiVersion: 'felis.dev/v1alpha1', kind: 'MinecraftServer', spec: { rconSecretRef: { name: 'alpha-rcon', key: 'password' } } });
    const secret = standIn.get('secrets', NS, 'alpha-rcon')!;
    expect(secret.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'MinecraftServer', name: 'alpha', uid: object.metadata.uid })]);
    await expect(cluster.createServer(spec('alpha'))).rejects.toBeInstanceOf(ClusterConflictError);
  });

  it('reads the RCON endpoint and password from the Secret, once a pod runs', async () => {
    standIn.put('secrets', { metadata: { name: 'alpha-rcon', namespace: NS }, data: { password: Buffer.from('s3cret').toString('base64') } });
    await expect(cluster.rconEndpoint('alpha')).rejects.toBeInstanceOf(ClusterNoPodError);
    standIn.put('pods', { metadata: { name: podName('alpha'), namespace: NS }, status: { phase: 'Running' } });
    await expect(cluster.rconEndpoint('alpha')).resolves.toEqual({ host: '127.0.0.1', port: 1, password: 's3cret' });
    await expect(cluster.rconEndpoint('nobody')).rejects.toBeInstanceOf(ClusterNotFoundError);
  });

  it('changes the desired state by a merge patch that survives conflicts', async () => {
    standIn.failNext('PATCH', `/apis/felis.dev/v1alpha1/namespaces/${NS}/minecraftservers/alpha`, 409, 2);
    const patched = await cluster.setDesiredState('alpha', 'Running');
    expect(patched.spec.desiredState).toBe('Running');
    expect(standIn.get('minecraftservers', NS, 'alpha')!.spec!.desiredState).toBe('Running');
    await expect(cluster.setDesiredState('ghost', 'Running')).rejects.toBeInstanceOf(ClusterNotFoundError);
  });

  it('changes only the fields a spec patch names, and deletes a server', async () => {
    await cluster.createServer(spec('edited', { displayName: 'Before', cpu: '2', cpuRequest: '1' }));
    const updated = await cluster.updateServer('edited', { displayName: 'After', cpu: '3' });
    expect(updated.spec).toMatchObject({ displayName: 'After', memory: '2Gi' });
    expect(standIn.get('minecraftservers', NS, 'edited')!.spec).toMatchObject({ displayName: 'After', resources: { cpu: '3', cpuRequest: '1' } });
    await cluster.removeServer('edited');
    expect(standIn.get('minecraftservers', NS, 'edited')).toBeUndefined();
    await expect(cluster.removeServer('edited')).rejects.toBeInstanceOf(ClusterNotFoundError);
    await expect(cluster.updateServer('edited', { displayName: 'x' })).rejects.toBeInstanceOf(ClusterNotFoundError);
  });

  it('feeds the server cache by list and watch, and loses no update when the stream is cut mid-flight', async () => {
    const cache = new ServerCache(cluster, 'play.example');
    await cache.ready();
    expect(cache.get('alpha')?.resource.spec.desiredState).toBe('Running');
    await cluster.createServer(spec('beta'));
    await vi.waitFor(() => expect(cache.get('beta')).toBeDefined());

    // Cut every watch, then write while no stream is open: the resumed watch replays from its version.
    expect(standIn.killWatches()).toBeGreaterThan(0);
    standIn.put('minecraftservers', { ...standIn.get('minecraftservers', NS, 'beta')!, metadata: { ...standIn.get('minecraftservers', NS, 'beta')!.metadata, labels: { [FORWARDING_LABEL]: 'legacy' } } });
    await cluster.patchServerStatus('beta', { phase: 'Running', ready: true, players: { online: 3, max: 20 } });
    await vi.waitFor(() => expect(cache.get('beta')?.resource.status).toMatchObject({ phase: 'Running', playersOnline: 3 }));
    expect(cache.get('beta')?.resource.spec.labels[FORWARDING_LABEL]).toBe('legacy');
    expect(cache.byHost('beta-sub.play.example')?.resource.spec.name).toBe('beta');

    // A bookmark moves the version without an event; a deletion arrives as DELETED.
    standIn.bookmark();
    standIn.remove('minecraftservers', NS, 'beta');
    await vi.waitFor(() => expect(cache.get('beta')).toBeUndefined());
    cache.close();
  });

  it('lists again when the watch version has expired (410 Gone)', async () => {
    const cache = new ServerCache(cluster, undefined);
    await cache.ready();
    standIn.killWatches();
    standIn.compact();
    await cluster.createServer(spec('gamma'));
    // The resumed watch is refused with an in-stream 410; the cache lists again and sees gamma.
    await vi.waitFor(() => expect(cache.get('gamma')).toBeDefined(), { timeout: 5_000 });
    expect(standIn.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/minecraftservers')).length).toBeGreaterThanOrEqual(2);
    cache.close();
  });

  it('counts servers holding a node slot against the ready, schedulable nodes', async () => {
    standIn.put('nodes', { metadata: { name: 'n1', labels: { 'felis.dev/game': 'true' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    standIn.put('nodes', { metadata: { name: 'n2' }, spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    standIn.put('nodes', { metadata: { name: 'n3' }, status: { conditions: [{ type: 'Ready', status: 'False' }] } });
    await cluster.createServer(spec('login', { labels: { [SYSTEM_LABEL]: 'true' }, desiredState: 'Running' }));
    const capacity = await cluster.capacity();
    // alpha wants Running; gamma is Stopped; the system server never counts.
    expect(capacity).toEqual({ running: 1, nodes: 1 });
  });

  it('recreates the pod of a server with a fresh restart budget', async () => {
    await cluster.createStatefulSet({
      metadata: { name: 'alpha', labels: { 'felis.dev/server': 'alpha' } },
      spec: { replicas: 1, serviceName: 'alpha', selector: { matchLabels: { 'felis.dev/server': 'alpha' } }, template: { metadata: { labels: { 'felis.dev/server': 'alpha' } }, spec: { containers: [{ name: 'server', image: 'x' }] } } },
    });
    const before = standIn.get('pods', NS, podName('alpha'))!;
    await cluster.patchServerStatus('alpha', { phase: 'Failed', startGaveUp: true, autoRestarts: 3 });
    const after = await cluster.recreatePod('alpha');
    expect(after.status).toMatchObject({ phase: 'Starting', autoRestarts: 0, startGaveUp: false });
    // The StatefulSet brings the pod back as a new object.
    expect(standIn.get('pods', NS, podName('alpha'))!.metadata.uid).not.toBe(before.metadata.uid);
  });

  it('stops a server in an emergency: the stop recorded, the workload scaled to none, the pod deleted without grace', async () => {
    await cluster.createServer(spec('eta', { desiredState: 'Running' }));
    await cluster.createStatefulSet({
      metadata: { name: 'eta', labels: { 'felis.dev/server': 'eta' } },
      spec: { replicas: 1, serviceName: 'eta', selector: { matchLabels: { 'felis.dev/server': 'eta' } }, template: { metadata: { labels: { 'felis.dev/server': 'eta' } }, spec: { containers: [{ name: 'server', image: 'x' }] } } },
    });
    expect(standIn.get('pods', NS, podName('eta'))).toBeDefined();
    const asked = standIn.requests.length;
    const stopped = await cluster.emergencyStop('eta');
    expect(stopped.spec.desiredState).toBe('Stopped');
    expect(standIn.get('minecraftservers', NS, 'eta')!.spec).toMatchObject({ desiredState: 'Stopped' });
    expect(standIn.get('statefulsets', NS, 'eta')!.spec).toMatchObject({ replicas: 0 });
    const calls = standIn.requests.slice(asked).map((r) => `${r.method} ${r.path}${r.query}`);
    expect(calls).toContain(`DELETE /api/v1/namespaces/${NS}/pods/${podName('eta')}?gracePeriodSeconds=0`);
    // The intent is written before the workload is touched.
    expect(calls.findIndex((c) => c.startsWith('PATCH') && c.includes('minecraftservers'))).toBeLessThan(calls.findIndex((c) => c.startsWith('DELETE')));
    await expect(cluster.emergencyStop('nobody')).rejects.toBeInstanceOf(ClusterNotFoundError);
  });

  it('streams pod logs with their timestamps, from sinceTime, following new lines', async () => {
    const pod = podName('alpha');
    const signal = new AbortController().signal;
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

  it('runs Jobs: create, get, watch to completion, delete', async () => {
    const events: Array<[string, string | undefined]> = [];
    const watch = cluster.watchJobs('felis.dev/job=backup', (type, job) => events.push([type, job.status?.succeeded ? 'succeeded' : undefined]));
    await cluster.createJob({
      metadata: { name: 'backup-alpha-1', labels: { 'felis.dev/job': 'backup' } },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'backup', image: 'busybox' }] } } },
    });
    expect((await cluster.getJob('backup-alpha-1'))?.metadata?.name).toBe('backup-alpha-1');
    const job = standIn.get('jobs', NS, 'backup-alpha-1')!;
    standIn.put('jobs', { ...job, status: { succeeded: 1 } });
    await vi.waitFor(() => expect(events).toContainEqual(['MODIFIED', 'succeeded']));
    await cluster.deleteJob('backup-alpha-1');
    await cluster.deleteJob('backup-alpha-1'); // already gone: no error
    expect(await cluster.getJob('backup-alpha-1')).toBeUndefined();
    await vi.waitFor(() => expect(events.at(-1)?.[0]).toBe('DELETED'));
    watch.stop();
  });
});
