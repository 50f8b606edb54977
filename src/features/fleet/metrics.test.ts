import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { builds, buildScans } from '../../db/schema/builds.js';
import { dbBackups, updateReports } from '../../db/schema/operations.js';
import { worldBackups, worldJobs } from '../../db/schema/worlds.js';
import { SERVICE_VERSION } from '../../version.js';
import { countScheduleRun, refreshFleetFigures } from './index.js';

type Labels = Record<string, string | number>;

/** The value of one series as a scrape would show it (collect callbacks run). */
async function valueOf(registry: Registry, name: string, labels: Labels = {}): Promise<number | undefined> {
  const base = registry.getSingleMetric(name) ? name : name.replace(/_(count|sum|bucket)$/, '');
  const metric = registry.getSingleMetric(base);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const found = values.find(
    (v) =>
      (base === name || (v as { metricName?: string }).metricName === name) &&
      Object.entries(labels).every(([k, want]) => v.labels[k] === want) &&
      (labels.le !== undefined || v.labels.le === undefined),
  );
  return found?.value;
}

async function seriesOf(registry: Registry, name: string): Promise<Array<{ labels: Labels; value: number }>> {
  const { values } = await registry.getSingleMetric(name)!.get();
  return values.map((v) => ({ labels: v.labels as Labels, value: v.value }));
}

const HOUR = 3600_000;
const spec = (name: string, desiredState: 'Running' | 'Stopped' = 'Stopped') => ({ name, subdomain: name, desiredState, labels: {} });

describe('fleet metrics', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let registry: Registry;

  beforeAll(async () => {
    deps = createTestDeps(database(), { env: { METRICS_SERVER_SERIES: '2' } });
    registry = deps.metrics.registry;
    deps.cluster.addServer(spec('alpha'));
    deps.cluster.addServer(spec('bravo'));
    deps.cluster.addServer(spec('charlie'));
    deps.cluster.addServer({ ...spec('lobby', 'Running'), labels: { 'felis.dev/system': 'true' } });
    await deps.serverCache.ready();
  });

  it('felis_build_info names the running version', async () => {
    expect(await valueOf(registry, 'felis_build_info', { version: SERVICE_VERSION })).toBe(1);
  });

  it('counts servers by phase, desired state and system, with zeros for the states nobody is in', async () => {
    expect(await valueOf(registry, 'felis_servers', { phase: 'Stopped', desired_state: 'Stopped', system: 'false' })).toBe(3);
    expect(await valueOf(registry, 'felis_servers', { phase: 'Starting', desired_state: 'Running', system: 'true' })).toBe(1);
    expect(await valueOf(registry, 'felis_servers', { phase: 'Failed', desired_state: 'Running', system: 'false' })).toBe(0);
    await deps.cluster.setDesiredState('alpha', 'Running');
    expect(await valueOf(registry, 'felis_servers', { phase: 'Stopped', desired_state: 'Stopped', system: 'false' })).toBe(2);
    expect(await valueOf(registry, 'felis_servers', { phase: 'Starting', desired_state: 'Running', system: 'false' })).toBe(1);
  });

  it('times a wake until the server is ready, from the cache, in a histogram', async () => {
    const before = (await valueOf(registry, 'felis_wake_to_ready_seconds_count')) ?? 0;
    await deps.cluster.setDesiredState('bravo', 'Running');
    deps.clock.advance(42_000);
    deps.cluster.tick();
    expect(deps.cluster.server('bravo')!.status.ready).toBe(true);
    expect(await valueOf(registry, 'felis_wake_to_ready_seconds_count')).toBe(before + 2); // alpha woke earlier, bravo now
    expect(await valueOf(registry, 'felis_wake_to_ready_seconds_bucket', { le: 45 })).toBe(before + 2);
    expect(await valueOf(registry, 'felis_wake_to_ready_seconds_bucket', { le: 30 })).toBe(0);
    // Ready again without a new wake (a re-list, a second callback) is no second observation.
    deps.cluster.tick();
    expect(await valueOf(registry, 'felis_wake_to_ready_seconds_count')).toBe(before + 2);
  });

  it('sums players online, and names at most METRICS_SERVER_SERIES servers', async () => {
    deps.cluster.setPlayers('alpha', 3);
    deps.cluster.setPlayers('bravo', 5);
    deps.cluster.setPlayers('charlie', 7);
    expect(await valueOf(registry, 'felis_players_online')).toBe(15);
    const perServer = await seriesOf(registry, 'felis_server_players_online');
    expect(perServer).toEqual([
      { labels: { server: 'alpha' }, value: 3 },
      { labels: { server: 'bravo' }, value: 5 },
    ]);
  });

  it('counts starts that fail and starts that give up', async () => {
    const failures = (await valueOf(registry, 'felis_server_start_failures_total'))!;
    const giveUps = (await valueOf(registry, 'felis_server_start_give_ups_total'))!;
    deps.cluster.fail('alpha', false);
    deps.cluster.fail('bravo', true);
    expect(await valueOf(registry, 'felis_server_start_failures_total')).toBe(failures + 2);
    expect(await valueOf(registry, 'felis_server_start_give_ups_total')).toBe(giveUps + 1);
    // Still Failed on the next event: not counted again.
    deps.cluster.setPlayers('alpha', 0);
    expect(await valueOf(registry, 'felis_server_start_failures_total')).toBe(failures + 2);
  });

  it('shows the database figures from the last refresh, never querying on a scrape', async () => {
    const { db } = database();
    const now = deps.clock.now();
    expect(await valueOf(registry, 'felis_metrics_figures_age_seconds')).toBe(-1);
    expect(await valueOf(registry, 'felis_database_backup_age_seconds')).toBe(-1);
    await refreshFleetFigures(deps);
    expect(await valueOf(registry, 'felis_servers_without_verified_backup')).toBe(3);

    const backup = (server: string, verifiedHoursAgo: number | null, extra: Partial<typeof worldBackups.$inferInsert> = {}) => ({
      serverName: server,
      reason: 'manual' as const,
      status: 'present' as const,
      storageKey: `k/${randomUUID()}`,
      sizeBytes: 1000,
      verifiedAt: verifiedHoursAgo === null ? null : new Date(now.getTime() - verifiedHoursAgo * HOUR),
      createdAt: new Date(now.getTime() - (verifiedHoursAgo ?? 1) * HOUR),
      expiresAt: new Date(now.getTime() + 30 * 24 * HOUR),
      ...extra,
    });
    await db.insert(worldBackups).values([
      backup('alpha', 30),
      backup('alpha', 2, { sizeBytes: 2048 }),
      backup('bravo', 1, { corrupt: true, sizeBytes: 4096 }),
      backup('charlie', 27, { sizeBytes: 512 }),
      backup('charlie', null, { status: 'failed' }),
    ]);
    await db.insert(dbBackups).values({ at: new Date(now.getTime() - 5 * HOUR), name: 'b.tar.gz', label: 'daily', sizeBytes: 1, dir: '/d', recordedAt: now });
    await db.insert(updateReports).values({ checkedAt: new Date(now.getTime() - 2 * HOUR), felis: SERVICE_VERSION, components: [], recordedAt: now });

    // Written, but not yet read: the scrape shows the last refresh.
    expect(await valueOf(registry, 'felis_servers_without_verified_backup')).toBe(3);
    await refreshFleetFigures(deps);
    deps.clock.advance(60_000);
    expect(await valueOf(registry, 'felis_metrics_figures_age_seconds')).toBe(60);
    // METRICS_SERVER_SERIES=2: alpha and charlie (bravo's only backup is corrupt).
    expect(await seriesOf(registry, 'felis_backup_newest_verified_age_seconds')).toEqual([
      { labels: { server: 'alpha' }, value: 2 * 3600 + 60 },
      { labels: { server: 'charlie' }, value: 27 * 3600 + 60 },
    ]);
    expect(await valueOf(registry, 'felis_backup_newest_verified_age_max_seconds')).toBe(27 * 3600 + 60);
    expect(await valueOf(registry, 'felis_servers_without_verified_backup')).toBe(1);
    expect(await seriesOf(registry, 'felis_backup_newest_size_bytes')).toEqual([
      { labels: { server: 'alpha' }, value: 2048 },
      { labels: { server: 'bravo' }, value: 4096 },
    ]);
    expect(await valueOf(registry, 'felis_world_backups', { status: 'present' })).toBe(4);
    expect(await valueOf(registry, 'felis_world_backups', { status: 'failed' })).toBe(1);
    expect(await valueOf(registry, 'felis_world_backups', { status: 'corrupt' })).toBe(1);
    expect(await valueOf(registry, 'felis_database_backup_age_seconds')).toBe(5 * 3600 + 60);
    expect(await valueOf(registry, 'felis_update_report_age_seconds')).toBe(2 * 3600 + 60);
  });

  it('counts backup jobs, builds and scan findings that finished since the last refresh, once each', async () => {
    const { db } = database();
    await refreshFleetFigures(deps);
    const start = deps.clock.now();
    deps.clock.advance(1000);
    const done = deps.clock.now();
    const job = (state: 'succeeded' | 'failed', seconds: number) => ({
      serverName: 'alpha',
      kind: 'backup' as const,
      state,
      lockHolder: randomUUID(),
      startedAt: new Date(done.getTime() - seconds * 1000),
      finishedAt: done,
    });
    await db.insert(worldJobs).values([job('succeeded', 90), job('failed', 10), { ...job('succeeded', 5), kind: 'restore' as const }]);
    const build = (status: 'succeeded' | 'failed', finishedAt: Date | null) => ({
      imageRef: 'registry.test/x:1',
      status,
      requestedBy: 'system',
      createdAt: start,
      updatedAt: done,
      finishedAt,
    });
    const [built] = await db.insert(builds).values([build('succeeded', done), build('failed', done), build('failed', null)]).returning();
    await db.insert(buildScans).values({
      buildId: built!.id,
      scannedAt: done,
      summary: { blocked: false, counts: { HIGH: 2, LOW: 5 }, blocking_counts: {}, findings: [] },
    });
    deps.clock.advance(1000);
    await refreshFleetFigures(deps);
    expect(await valueOf(registry, 'felis_backup_jobs_total', { outcome: 'succeeded' })).toBe(1);
    expect(await valueOf(registry, 'felis_backup_jobs_total', { outcome: 'failed' })).toBe(1);
    expect(await valueOf(registry, 'felis_backup_duration_seconds_count')).toBe(2);
    expect(await valueOf(registry, 'felis_backup_duration_seconds_sum')).toBe(100);
    expect(await valueOf(registry, 'felis_builds_total', { outcome: 'succeeded' })).toBe(1);
    expect(await valueOf(registry, 'felis_builds_total', { outcome: 'failed' })).toBe(1);
    expect(await valueOf(registry, 'felis_build_findings_total', { severity: 'HIGH' })).toBe(2);
    expect(await valueOf(registry, 'felis_build_findings_total', { severity: 'LOW' })).toBe(5);
    expect(await valueOf(registry, 'felis_build_findings_total', { severity: 'CRITICAL' })).toBe(0);
    // The next round counts nothing twice.
    deps.clock.advance(1000);
    await refreshFleetFigures(deps);
    expect(await valueOf(registry, 'felis_backup_duration_seconds_count')).toBe(2);
    expect(await valueOf(registry, 'felis_builds_total', { outcome: 'failed' })).toBe(1);
  });

  it('counts schedule runs by outcome through the hook the schedules feature calls', async () => {
    expect(await valueOf(registry, 'felis_schedule_runs_total', { outcome: 'failed' })).toBe(0);
    countScheduleRun(deps, 'failed');
    countScheduleRun(deps, 'ok');
    countScheduleRun(deps, 'ok');
    expect(await valueOf(registry, 'felis_schedule_runs_total', { outcome: 'failed' })).toBe(1);
    expect(await valueOf(registry, 'felis_schedule_runs_total', { outcome: 'ok' })).toBe(2);
  });

  it('names no server when METRICS_SERVER_SERIES is 0, but keeps the fleet totals', async () => {
    const other = createTestDeps(database(), { env: { METRICS_SERVER_SERIES: '0' } });
    other.cluster.addServer(spec('delta'));
    other.cluster.setPlayers('delta', 4);
    await other.serverCache.ready();
    expect(await seriesOf(other.metrics.registry, 'felis_server_players_online')).toEqual([]);
    expect(await valueOf(other.metrics.registry, 'felis_players_online')).toBe(4);
  });
});
