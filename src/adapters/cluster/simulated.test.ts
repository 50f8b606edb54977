import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/clock.js';
import { SimulatedCluster } from './simulated.js';
import { ClusterConflictError, ClusterNotFoundError, SYSTEM_LABEL, type ServerWatchEvent } from './types.js';

const spec = (name: string) => ({ name, subdomain: name, labels: {} });

describe('simulated cluster', () => {
  it('moves phases on the clock: Starting → Running after the delay, Stopping → Stopped', async () => {
    const clock = new ManualClock();
    const cluster = new SimulatedCluster({ clock, startDelayMs: 3_000, stopDelayMs: 1_000 });
    cluster.addServer(spec('a'));
    await cluster.setDesiredState('a', 'Running');
    clock.advance(2_999);
    cluster.tick();
    expect(cluster.server('a')!.status).toMatchObject({ phase: 'Starting', ready: false });
    clock.advance(1);
    cluster.tick();
    expect(cluster.server('a')!.status).toMatchObject({ phase: 'Running', ready: true, endpointAddress: 'a.felis.svc:25565' });
    cluster.setPlayers('a', 3, 10);
    await cluster.setDesiredState('a', 'Stopped');
    expect(cluster.server('a')!.status).toMatchObject({ phase: 'Stopping', ready: false, playersOnline: 0 });
    clock.advance(1_000);
    cluster.tick();
    expect(cluster.server('a')!.status.phase).toBe('Stopped');
  });

  it('times out a hanging start, recreates its pod at most 3 times, then gives up; recreatePod starts over', async () => {
    const clock = new ManualClock();
    const cluster = new SimulatedCluster({ clock, startTimeoutMs: 10_000 });
    cluster.addServer(spec('h'));
    cluster.setStartHangs('h', true);
    await cluster.setDesiredState('h', 'Running');
    for (let i = 1; i <= 3; i++) {
      clock.advance(10_000);
      cluster.tick();
      expect(cluster.server('h')!.status).toMatchObject({ phase: 'Starting', autoRestarts: i, startGaveUp: false });
    }
    clock.advance(10_000);
    cluster.tick();
    expect(cluster.server('h')!.status).toMatchObject({ phase: 'Failed', autoRestarts: 3, startGaveUp: true });
    await cluster.recreatePod('h');
    expect(cluster.server('h')!.status).toMatchObject({ phase: 'Starting', autoRestarts: 0, startGaveUp: false });
  });

  it('delivers every change to watchers, refuses duplicates, counts capacity without system servers', async () => {
    const cluster = new SimulatedCluster({ clock: new ManualClock(), nodes: 2 });
    const events: ServerWatchEvent[] = [];
    const watch = cluster.watchServers('0', (e) => events.push(e), () => {});
    cluster.addServer(spec('w'));
    cluster.addServer({ name: 'lobby', subdomain: 'lobby', desiredState: 'Running', labels: { [SYSTEM_LABEL]: 'true' } });
    await cluster.setDesiredState('w', 'Running');
    cluster.deleteServer('lobby');
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'MODIFIED', 'DELETED']);
    const versions = events.map((e) => Number(e.type === 'DELETED' ? e.resourceVersion : e.server.resourceVersion));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(() => cluster.addServer(spec('w'))).toThrow(ClusterConflictError);
    await expect(cluster.setDesiredState('none', 'Running')).rejects.toBeInstanceOf(ClusterNotFoundError);
    expect(await cluster.capacity()).toEqual({ running: 1, nodes: 2 });
    watch.stop();
    cluster.addServer(spec('x'));
    expect(events).toHaveLength(4);
    cluster.setReachable(false);
    await expect(cluster.listServers()).rejects.toThrow('unreachable');
  });

  it('keeps its servers in the state file across a restart, and reads them back without writing the file again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'felis-sim-state-'));
    try {
      const stateFile = join(dir, 'simulated-cluster.json');
      const first = new SimulatedCluster({ clock: new ManualClock(), stateFile });
      for (let i = 0; i < 50; i++) first.addServer(spec(`s${i}`));
      await first.setDesiredState('s7', 'Running');
      await first.close();
      // Each save writes a new file renamed into place: the same inode means nothing was written.
      const written = statSync(stateFile).ino;
      const second = new SimulatedCluster({ clock: new ManualClock(), stateFile });
      expect(statSync(stateFile).ino).toBe(written);
      const { servers } = await second.listServers();
      expect(servers).toHaveLength(50);
      expect(second.server('s7')!.spec.desiredState).toBe('Running');
      expect(second.server('s7')!.status.phase).toBe('Starting');
      expect(second.server('s8')!.spec.desiredState).toBe('Stopped');
      // A change after the load is kept again.
      second.addServer(spec('later'));
      expect(statSync(stateFile).ino).not.toBe(written);
      const third = new SimulatedCluster({ clock: new ManualClock(), stateFile });
      expect(third.server('later')).toBeDefined();
      await Promise.all([second.close(), third.close()]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
