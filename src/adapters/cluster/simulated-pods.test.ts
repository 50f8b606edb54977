import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/clock.js';
import { RconAuthError, RconConnection } from '../rcon/client.js';
import { SimulatedCluster } from './simulated.js';
import { ClusterNoPodError, type PodLogLine } from './types.js';

function cluster() {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z');
  const sim = new SimulatedCluster({ clock, startDelayMs: 5_000, stopDelayMs: 2_000 });
  sim.addServer({ name: 'alpha', subdomain: 'alpha', labels: {} });
  return { clock, sim };
}

async function collect(iterable: AsyncIterable<PodLogLine>, count = Infinity): Promise<PodLogLine[]> {
  const lines: PodLogLine[] = [];
  for await (const line of iterable) {
    lines.push(line);
    if (lines.length >= count) break;
  }
  return lines;
}

describe('simulated pods', () => {
  it('has no pod while stopped, and a pod log from the start on', async () => {
    const { clock, sim } = cluster();
    const signal = new AbortController().signal;
    await expect(collect(sim.podLogs('alpha', { follow: false, signal }))).rejects.toBeInstanceOf(ClusterNoPodError);
    await sim.setDesiredState('alpha', 'Running');
    clock.advance(5_000);
    sim.tick();
    const lines = await collect(sim.podLogs('alpha', { follow: false, signal }));
    expect(lines[0]!.line).toBe('[12:00:00 INFO]: Starting minecraft server version 1.21.4');
    expect(lines.at(-1)!.line).toBe('[12:00:05 INFO]: Done (5.012s)! For help, type "help"');
    expect(lines.at(-1)!.time.toISOString()).toBe('2026-06-01T12:00:05.000Z');
    const since = await collect(sim.podLogs('alpha', { follow: false, signal, sinceTime: new Date('2026-06-01T12:00:05.700Z') }));
    expect(since.every((l) => l.time.getTime() >= Date.parse('2026-06-01T12:00:05Z'))).toBe(true);
    expect(since).toHaveLength(5);
    expect(await collect(sim.podLogs('alpha', { follow: false, signal, tailLines: 2 }))).toEqual(lines.slice(-2));
    await sim.close();
  });

  it('follows new lines until the pod ends or the reader aborts', async () => {
    const { clock, sim } = cluster();
    await sim.setDesiredState('alpha', 'Running');
    const abort = new AbortController();
    const followed = collect(sim.podLogs('alpha', { follow: true, signal: abort.signal, tailLines: 0 }));
    clock.advance(5_000);
    sim.tick();
    sim.pods.write('alpha', 'hello');
    await sim.setDesiredState('alpha', 'Stopped');
    clock.advance(2_000);
    sim.tick();
    const lines = (await followed).map((l) => l.line);
    expect(lines).toContain('[12:00:05 INFO]: hello');
    expect(lines.at(-1)).toBe('[12:00:05 INFO]: Saving worlds');

    await sim.setDesiredState('alpha', 'Running');
    const aborted = collect(sim.podLogs('alpha', { follow: true, signal: abort.signal }));
    abort.abort();
    await expect(aborted).resolves.toBeDefined();
    await sim.close();
  });

  it('answers RCON like Paper once running, over TCP with the pod password', async () => {
    const { clock, sim } = cluster();
    await sim.setDesiredState('alpha', 'Running');
    await expect(sim.rconEndpoint('alpha')).rejects.toBeInstanceOf(ClusterNoPodError);
    clock.advance(5_000);
    sim.tick();
    const endpoint = await sim.rconEndpoint('alpha');
    await expect(RconConnection.open({ ...endpoint, password: 'guess' })).rejects.toBeInstanceOf(RconAuthError);
    const rcon = await RconConnection.open(endpoint);
    expect(await rcon.command('whitelist add Steve')).toBe('Added Steve to the whitelist');
    expect(await rcon.command('list')).toBe('There are 0 of a max of 20 players online: ');
    const log = (await collect(sim.podLogs('alpha', { follow: false, signal: new AbortController().signal }))).map((l) => l.line);
    expect(log).toContain('[12:00:05 INFO]: [Rcon: Added Steve to the whitelist]');
    rcon.close();
    await sim.setDesiredState('alpha', 'Stopped');
    clock.advance(2_000);
    sim.tick();
    await expect(sim.rconEndpoint('alpha')).rejects.toBeInstanceOf(ClusterNoPodError);
    await sim.close();
  });
});
