import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpSessionSources } from '../../adapters/session-sources/sources.js';
import { createMetrics } from '../../http/metrics.js';
import { ManualClock } from '../../lib/clock.js';
import { captureLog } from '../../../test/helpers/log.js';
import { SessionStandIn } from '../../../test/helpers/session-stand-in.js';
import { verifierMetrics } from './metrics.js';
import { NameRegistry } from './name-registry.js';

describe('NameRegistry (names taken at the primary)', () => {
  let primary: SessionStandIn;
  let clients: ReturnType<typeof createHttpSessionSources>;

  beforeAll(async () => {
    primary = await SessionStandIn.start();
    clients = createHttpSessionSources([{ name: 'mojang', url: primary.url, primary: true, profile_url: primary.url }], 5000);
  });
  afterAll(async () => {
    clients.close();
    await primary.close();
  });

  function registry(maxEntries: number) {
    const metrics = verifierMetrics(createMetrics({ defaultMetrics: false }).registry);
    return new NameRegistry(clients.profiles, new ManualClock(), metrics, captureLog('info').log, maxEntries);
  }

  it('stays within its bound, evicting the least recently used name', async () => {
    const names = registry(3);
    primary.takenNames.add('Alpha');
    for (const n of ['Alpha', 'Bravo', 'Charlie']) await names.isTaken(n);
    await names.isTaken('alpha'); // a hit: Alpha becomes the most recent, ignoring case
    await names.isTaken('Delta'); // evicts Bravo
    expect(names.size).toBe(3);
    const asked = () => primary.profileRequests().length;
    const before = asked();
    expect(await names.isTaken('ALPHA')).toBe(true);
    expect(asked()).toBe(before);
    await names.isTaken('Bravo');
    expect(asked()).toBe(before + 1);
  });

  it('asks once for concurrent lookups of one name', async () => {
    const names = registry(10);
    const before = primary.profileRequests().length;
    const answers = await Promise.all(Array.from({ length: 5 }, () => names.isTaken('Echo')));
    expect(answers).toEqual([false, false, false, false, false]);
    expect(primary.profileRequests().length).toBe(before + 1);
    expect(primary.profileRequests().at(-1)!.path).toBe('/users/profiles/minecraft/Echo');
  });
});
