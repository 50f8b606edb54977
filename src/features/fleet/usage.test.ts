import { and, count, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { describeTierMatrix } from '../../../test/helpers/tiers.js';
import { serverClaims } from '../../db/schema/servers.js';
import { serverUsage } from '../../db/schema/usage.js';
import { sampleUsage } from './index.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
type History = { resolution: string; points: Array<{ at: string; players_avg: number; players_max: number; cpu_milli: number | null; memory_mib: number | null }> };

describe('usage history: sampled each minute, kept downsampled', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let apps: ReturnType<typeof createTestApps>;
  let owner: string;

  beforeAll(async () => {
    deps = createTestDeps(database());
    deps.clock.set('2026-06-01T00:00:00.000Z');
    apps = createTestApps(deps);
    owner = (await createUser(deps)).id;
    deps.cluster.addServer({ name: 'busy', subdomain: 'busy', desiredState: 'Running', labels: {} });
    deps.cluster.addServer({ name: 'idle', subdomain: 'idle', labels: {} });
    await deps.serverCache.ready();
    deps.clock.advance(60_000);
    deps.cluster.tick();
    await deps.database.db.insert(serverClaims).values({ serverName: 'busy', subdomain: 'busy', userId: owner, claimedAt: deps.clock.now() });
  });

  const rowsOf = async (server: string, resolution: 'minute' | 'hour') =>
    Number((await deps.database.db.select({ n: count() }).from(serverUsage).where(and(eq(serverUsage.serverName, server), eq(serverUsage.resolution, resolution))))[0]!.n);
  const history = async (query = '') => {
    const res = await apps.external.request(`/api/v1/servers/busy/usage${query}`, { headers: (await signIn(deps, { userId: owner })).headers });
    expect(res.status).toBe(200);
    return (await res.json()) as History;
  };

  it('keeps a point a minute with players, CPU and memory of a running pod (the simulated cluster gives plausible figures)', async () => {
    // From 00:01 to 02:00: players 0..9 repeating on busy.
    for (let i = 0; i < 119; i++) {
      deps.cluster.setPlayers('busy', i % 10);
      await sampleUsage(deps);
      deps.clock.advance(MINUTE);
    }
    expect(await rowsOf('busy', 'minute')).toBe(119);
    expect(await rowsOf('idle', 'minute')).toBe(119);
    const day = await history();
    expect(day.resolution).toBe('minute');
    expect(day.points).toHaveLength(119);
    expect(day.points[0]!.at).toBe('2026-06-01T00:01:00.000Z');
    expect(day.points[5]).toMatchObject({ players_avg: 5, players_max: 5 });
    for (const p of day.points) {
      expect(p.cpu_milli).toBeGreaterThan(50);
      expect(p.memory_mib).toBeGreaterThan(1000);
    }
    // The stopped server has players (0) but no pod to measure.
    const idle = await deps.database.db.select().from(serverUsage).where(eq(serverUsage.serverName, 'idle')).limit(1);
    expect(idle[0]).toMatchObject({ playersAvg: 0, cpuMilli: null, memoryMib: null });
  });

  it('folds each complete hour into an hour row: the average and the most players, averaged resources', async () => {
    await sampleUsage(deps); // 02:00: hours 00 and 01 are complete
    const month = await history('?range=30d');
    expect(month.resolution).toBe('hour');
    expect(month.points.map((p) => p.at)).toEqual(['2026-06-01T00:00:00.000Z', '2026-06-01T01:00:00.000Z']);
    // 00:01..00:59: 59 samples of i % 10 for i = 0..58; 01:00..01:59: i = 59..118.
    const avg = (from: number, to: number) => {
      let sum = 0;
      for (let i = from; i <= to; i++) sum += i % 10;
      return Math.round((sum / (to - from + 1)) * 100) / 100;
    };
    expect(month.points[0]).toMatchObject({ players_avg: avg(0, 58), players_max: 9 });
    expect(month.points[1]).toMatchObject({ players_avg: avg(59, 118), players_max: 9 });
    expect(month.points[0]!.cpu_milli).toBeGreaterThan(50);
    // Folding again changes nothing.
    await sampleUsage(deps);
    expect(await rowsOf('busy', 'hour')).toBe(2);
  });

  it('stays bounded over 30 days: minutes for a day, hours for 30 days', async () => {
    // Sampled each hour at minute 0 and minute 30, for 32 days (the test's stand-in for every minute).
    for (let h = 0; h < 32 * 24; h++) {
      deps.clock.advance(30 * MINUTE);
      await sampleUsage(deps);
      deps.clock.advance(30 * MINUTE);
      await sampleUsage(deps);
    }
    const now = deps.clock.now().getTime();
    const minutes = await deps.database.db.select({ at: serverUsage.at }).from(serverUsage).where(and(eq(serverUsage.serverName, 'busy'), eq(serverUsage.resolution, 'minute')));
    expect(minutes.length).toBeLessThanOrEqual(2 * 24 + 1);
    expect(Math.min(...minutes.map((m) => m.at.getTime()))).toBeGreaterThanOrEqual(now - DAY);
    const hours = await deps.database.db.select({ at: serverUsage.at }).from(serverUsage).where(and(eq(serverUsage.serverName, 'busy'), eq(serverUsage.resolution, 'hour')));
    expect(hours.length).toBeLessThanOrEqual(30 * 24 + 1);
    expect(hours.length).toBeGreaterThanOrEqual(30 * 24 - 1);
    expect(Math.min(...hours.map((m) => m.at.getTime()))).toBeGreaterThanOrEqual(now - 30 * DAY);
    const month = await history('?range=30d');
    expect(month.points.length).toBe(hours.length);
    expect(month.points.every((p) => p.players_max >= p.players_avg)).toBe(true);
  }, 120_000);

  it('keeps it from other users (403), answers 404 for an unknown server and 400 for a bad range', async () => {
    const stranger = await createUser(deps);
    const res = await apps.external.request('/api/v1/servers/busy/usage', { headers: (await signIn(deps, { userId: stranger.id })).headers });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('forbidden');
    const staff = await createUser(deps, { role: 'admin' });
    expect((await apps.external.request('/api/v1/servers/busy/usage', { headers: (await signIn(deps, { userId: staff.id })).headers })).status).toBe(200);
    const headers = (await signIn(deps, { userId: owner })).headers;
    expect((await apps.external.request('/api/v1/servers/nosuch/usage', { headers })).status).toBe(404);
    for (const query of ['?range=7d', '?range=', '?other=1']) {
      const bad = await apps.external.request(`/api/v1/servers/busy/usage${query}`, { headers });
      expect(bad.status, query).toBe(400);
      expect((await errorOf(bad)).code).toBe('bad_request');
    }
  });
});

describe('usage history: tiers', () => {
  const database = useTestDatabase();
  describeTierMatrix(database, 'app', [{ method: 'get', path: '/api/v1/servers/survival/usage' }]);
});
