import { describe, expect, it, vi } from 'vitest';
import { SimulatedCluster } from '../../adapters/cluster/simulated.js';
import type { ServerList, ServerWatchEvent } from '../../adapters/cluster/types.js';
import { ManualClock } from '../../lib/clock.js';
import { ServerCache } from './core/cache.js';
import { normalizeHost } from './core/names.js';

describe('server cache', () => {
  it('fills from a list, follows the watch (add, change, delete) and indexes hosts', async () => {
    const cluster = new SimulatedCluster({ clock: new ManualClock() });
    cluster.addServer({ name: 'one', subdomain: 'Alpha', labels: {} });
    const cache = new ServerCache(cluster, 'Felis.Test');
    expect(cache.synced).toBe(false);
    await cache.ready();
    expect(cache.byHost('alpha.felis.test')?.info.name).toBe('one');
    cluster.addServer({ name: 'two', subdomain: 'beta', displayName: 'Beta', labels: {} });
    expect(cache.byHost('BETA')?.info.displayName).toBe('Beta');
    cluster.setPlayers('two', 4);
    expect(cache.get('two')?.info.playersOnline).toBe(4);
    cluster.deleteServer('two');
    expect(cache.get('two')).toBeUndefined();
    expect(cache.byHost('beta.felis.test')).toBeUndefined();
    expect(cache.size).toBe(1);
    cache.close();
  });

  it('tells its listeners when a server is to run or stop, not on every status change', async () => {
    const cluster = new SimulatedCluster({ clock: new ManualClock() });
    cluster.addServer({ name: 'one', subdomain: 'one', labels: {} });
    const cache = new ServerCache(cluster, 'felis.test');
    await cache.ready();
    const told: string[] = [];
    const stop = cache.onDesiredStateChange((name) => told.push(name));
    cluster.addServer({ name: 'two', subdomain: 'two', labels: {} });
    cluster.setPlayers('one', 3);
    await cluster.setDesiredState('one', 'Running');
    await cluster.setDesiredState('one', 'Running');
    await cluster.setDesiredState('one', 'Stopped');
    stop();
    await cluster.setDesiredState('two', 'Running');
    expect(told).toEqual(['two', 'one', 'one']);
    cache.close();
  });

  it('retries a failed first list on the next call, and lists again when the watch breaks', async () => {
    const cluster = new SimulatedCluster({ clock: new ManualClock() });
    cluster.addServer({ name: 'one', subdomain: 'one', labels: {} });
    let lists = 0;
    let breakWatch: ((err: Error) => void) | undefined;
    const adapter = Object.create(cluster) as SimulatedCluster;
    adapter.listServers = async (): Promise<ServerList> => {
      lists += 1;
      return cluster.listServers();
    };
    adapter.watchServers = (rv: string, onEvent: (e: ServerWatchEvent) => void, onError: (err: Error) => void) => {
      breakWatch = onError;
      return cluster.watchServers(rv, onEvent, onError);
    };
    cluster.setReachable(false);
    const cache = new ServerCache(adapter, 'felis.test');
    await expect(cache.ready()).rejects.toThrow('unreachable');
    cluster.setReachable(true);
    await cache.ready();
    expect(lists).toBe(2);
    breakWatch!(new Error('the watch broke'));
    await vi.waitFor(() => expect(lists).toBe(3), { timeout: 3_000 });
    cache.close();
  });

  it('answers from its last state while it re-lists after a broken watch, then catches up', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const cluster = new SimulatedCluster({ clock: new ManualClock() });
      cluster.addServer({ name: 'one', subdomain: 'one', labels: {} });
      let breakWatch: ((err: Error) => void) | undefined;
      let release: (() => void) | undefined;
      let slowLists = false;
      const adapter = Object.create(cluster) as SimulatedCluster;
      adapter.listServers = async (): Promise<ServerList> => {
        if (slowLists) await new Promise<void>((resolve) => (release = resolve));
        return cluster.listServers();
      };
      adapter.watchServers = (rv: string, onEvent: (e: ServerWatchEvent) => void, onError: (err: Error) => void) => {
        breakWatch = onError;
        return cluster.watchServers(rv, onEvent, onError);
      };
      const cache = new ServerCache(adapter, 'felis.test');
      await cache.ready();

      // The watch breaks; the cluster is unreachable for the first re-list and slow for the next.
      breakWatch!(new Error('410 Gone'));
      cluster.setReachable(false);
      expect(cache.synced).toBe(true);
      expect(cache.relisting).toBe(true);
      await vi.advanceTimersByTimeAsync(1_000); // first re-list fails
      expect(cache.byHost('one.felis.test')?.info.name).toBe('one');
      cluster.setReachable(true);
      cluster.addServer({ name: 'two', subdomain: 'two', labels: {} }); // missed by the broken watch
      slowLists = true;
      await vi.advanceTimersByTimeAsync(1_000); // second re-list starts and waits
      expect(release).toBeDefined();
      expect(cache.byHost('one.felis.test')?.info.name).toBe('one');
      expect(cache.byHost('two.felis.test')).toBeUndefined();
      await expect(cache.ready()).resolves.toBeUndefined(); // no wait for the re-list

      release!();
      await vi.advanceTimersByTimeAsync(0);
      expect(cache.relisting).toBe(false);
      expect(cache.byHost('two.felis.test')?.info.name).toBe('two');
      cache.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    ['Survival.Felis.Test', 'survival.felis.test'],
    ['survival.felis.test.', 'survival.felis.test'],
    ['survival.felis.test:25565', 'survival.felis.test'],
    ['SURVIVAL.:25565', 'survival'],
    ['::1', '::1'],
  ])('normalizes %s to %s', (host, expected) => {
    expect(normalizeHost(host)).toBe(expected);
  });
});
