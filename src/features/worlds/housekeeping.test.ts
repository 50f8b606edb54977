import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestDeps, TEST_ENV } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { testWorlds, useTempDir } from '../../../test/helpers/worlds.js';
import { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { kubeConfigFor } from '../../adapters/cluster/kubernetes/kubeconfig.js';
import { loadConfig } from '../../config.js';
import { worldBackups } from '../../db/schema/worlds.js';
import { writeSetting } from '../servers/wakes/settings.js';
import { backUpFolder } from './backups/folders.js';
import { backupRound } from './housekeeping.js';
import { KUBERNETES_NEEDS_S3, createWorldsRuntime } from './volumes/index.js';
import { readWorldTimes } from './settings/settings.js';

describe('the backup pass across replicas', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  it('runs each round on one replica: the other skips it until the round\'s interval has passed', async () => {
    const db = database();
    const a = createTestDeps(db, { overrides: { worlds: testWorlds(tempDir()) } });
    const b = createTestDeps(db, { overrides: { worlds: testWorlds(tempDir()) } });
    const ran = await Promise.all([backupRound(a, 'replica-a'), backupRound(b, 'replica-b')]);
    expect(ran.filter(Boolean)).toHaveLength(1);
    const winner = ran[0] ? a : b;
    const loser = ran[0] ? b : a;
    const loserName = ran[0] ? 'replica-b' : 'replica-a';
    expect(await backupRound(loser, loserName)).toBe(false);
    loser.clock.advance(10 * 60_000);
    winner.clock.advance(10 * 60_000);
    expect(await backupRound(loser, loserName)).toBe(true);
  });

  it('takes its interval from the worlds_sweep_seconds setting', async () => {
    const db = database();
    const deps = createTestDeps(db, { overrides: { worlds: testWorlds(tempDir()) } });
    await writeSetting(db.db, 'worlds_sweep_seconds', 120, deps.clock.now());
    deps.clock.advance(60 * 60_000); // past the rounds of the test before (one database per file)
    try {
      expect(await backupRound(deps, 'one')).toBe(true);
      deps.clock.advance(121_000);
      expect(await backupRound(deps, 'two')).toBe(true);
    } finally {
      await writeSetting(db.db, 'worlds_sweep_seconds', 600, deps.clock.now());
    }
  });
});

describe('world settings', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  it('has the documented defaults, takes positive integers and ignores anything else', async () => {
    const db = database();
    const deps = createTestDeps(db, { overrides: { worlds: testWorlds(tempDir()) } });
    const day = 24 * 3600 * 1000;
    const defaults = await readWorldTimes(db.db);
    expect(defaults).toEqual({
      retentionMs: { manual: 30 * day, pre_restore: 7 * day, inactive_15d: 90 * day },
      reverifyAfterMs: 7 * day,
      exportTtlMs: 24 * 3600 * 1000,
      idleReclaimMs: 15 * day,
      sweepMs: 600_000,
    });
    await writeSetting(db.db, 'backup_retention_manual_days', 2, deps.clock.now());
    await writeSetting(db.db, 'export_lifetime_hours', 0, deps.clock.now());
    await writeSetting(db.db, 'idle_reclaim_days', 'soon', deps.clock.now());
    try {
      const times = await readWorldTimes(db.db);
      expect(times).toMatchObject({ retentionMs: { manual: 2 * day }, exportTtlMs: 24 * 3600 * 1000, idleReclaimMs: 15 * day });
      const backup = await backUpFolder(deps, { serverName: 'alpha', folder: await deps.worlds.folders!.folder('alpha'), reason: 'manual' });
      const [row] = await db.db.select().from(worldBackups).where(eq(worldBackups.id, backup.id));
      expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(2 * day);
    } finally {
      await writeSetting(db.db, 'backup_retention_manual_days', 30, deps.clock.now());
      await writeSetting(db.db, 'export_lifetime_hours', 24, deps.clock.now());
      await writeSetting(db.db, 'idle_reclaim_days', 15, deps.clock.now());
    }
  });
});

describe('world jobs on Kubernetes', () => {
  const cluster = new KubernetesCluster({ kubeConfig: kubeConfigFor('http://127.0.0.1:1'), namespace: 'felis' });
  const log = { info() {}, warn() {}, error() {} } as never;

  it('need an S3 store: with a local one, world jobs are unavailable and the reason names the settings', () => {
    const runtime = createWorldsRuntime(loadConfig({ ...TEST_ENV, CLUSTER: 'kubernetes' } as NodeJS.ProcessEnv), cluster, { log });
    expect(runtime.runner).toBeUndefined();
    expect(runtime).toMatchObject({ folders: undefined, unavailable: KUBERNETES_NEEDS_S3 });
    expect(KUBERNETES_NEEDS_S3).toContain('BACKUP_S3_BUCKET');
  });

  it('run as Jobs with an S3 store', () => {
    const config = loadConfig({ ...TEST_ENV, CLUSTER: 'kubernetes', BACKUP_S3_BUCKET: 'worlds', BACKUP_S3_ENDPOINT: 'http://127.0.0.1:9' } as NodeJS.ProcessEnv);
    const runtime = createWorldsRuntime(config, cluster, { log });
    expect(runtime.runner?.kind).toBe('kubernetes');
    expect(runtime.unavailable).toBeUndefined();
  });
});
