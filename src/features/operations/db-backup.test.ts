import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThrowawayPostgres } from '../../../test/helpers/throwaway-postgres.js';
import { loadConfig } from '../../config.js';
import { writeBundle } from '../../db/bundles.js';
import { openDatabase, type Database, type DatabaseHandle } from '../../db/client.js';
import { appliedSchemaVersion, shippedSchemaVersion } from '../../db/dump.js';
import { auditLog } from '../../db/schema/audit.js';
import { users } from '../../db/schema/accounts.js';
import { ManualClock } from '../../lib/clock.js';
import { TEST_ENV } from '../../../test/helpers/app.js';
import { backupDatabase, migrateWithSafetyDump, restoreFromBundle } from './db-backup.js';
import { dbBackupStatus } from './records.js';

/** Every table of the public schema with its row count: what a round trip must give back. */
async function rowCounts(db: Database): Promise<Record<string, number>> {
  const result = await db.execute(sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`);
  const tables = ((Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Array<{ table_name: string }>).map((r) => r.table_name);
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const r = await db.execute(sql`select count(*)::int as n from ${sql.identifier(table)}`);
    counts[table] = ((Array.isArray(r) ? r : (r as { rows: unknown[] }).rows) as Array<{ n: number }>)[0]!.n;
  }
  return counts;
}

async function addRows(db: Database, clock: ManualClock, tag: string, n: number): Promise<void> {
  const now = clock.now();
  for (let i = 0; i < n; i++) {
    await db.insert(users).values({ username: `${tag}_${i}`, role: 'user', createdAt: now, updatedAt: now });
    await db.insert(auditLog).values({ at: now, actor: 'test', action: `${tag}_${i}`, detail: { i } });
  }
}

for (const kind of ['pglite', 'postgres'] as const) {
  describe(`database bundles on ${kind === 'pglite' ? 'the embedded PGlite' : 'PostgreSQL (a throw-away server)'}`, () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const dataDir = mkdtempSync(join(tmpdir(), 'felis-dbbackup-'));
    let pg: ThrowawayPostgres | undefined;
    let url: string | undefined;
    let database: DatabaseHandle;
    const config = () =>
      loadConfig({ ...TEST_ENV, DATABASE_URL: url ?? '', DATA_DIR: dataDir, DB_BACKUP_KEEP: '2' } as NodeJS.ProcessEnv);
    const open = async () => openDatabase({ url: config().databaseUrl, dataDir });

    beforeAll(async () => {
      if (kind === 'postgres') {
        pg = await ThrowawayPostgres.create();
        url = pg.url;
      }
      database = await open();
    }, 60_000);

    afterAll(async () => {
      await database?.close();
      await pg?.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('restores every table to the row counts of the bundle, after a pre-restore bundle of what was there', async () => {
      await addRows(database.db, clock, 'before', 5);
      const bundle = await backupDatabase({ database, config: config(), clock }, 'manual');
      const counts = await rowCounts(database.db);
      expect(bundle).toMatchObject({ label: 'manual', schema_version: shippedSchemaVersion(), felis_version: expect.any(String) });
      expect(bundle.size_bytes).toBeGreaterThan(0);
      expect(await dbBackupStatus(database.db, clock.now())).toMatchObject({ last: { name: bundle.name }, stale: false });

      clock.advance(60_000);
      await addRows(database.db, clock, 'after', 3);
      await database.db.delete(users).where(sql`${users.username} = 'before_0'`);
      expect(await rowCounts(database.db)).not.toEqual(counts);

      const { restored, safety } = await restoreFromBundle({ database, config: config(), clock }, join(bundle.dir, bundle.name));
      expect(restored.label).toBe('manual');
      expect(safety.label).toBe('pre-restore');
      database = await open();
      const after = await rowCounts(database.db);
      // The restored database is the bundle's, save the status row recorded after the bundle was taken.
      expect({ ...after, db_backups: counts.db_backups }).toEqual(counts);
    }, 60_000);

    it('keeps the newest bundles of each label only', async () => {
      for (let i = 0; i < 3; i++) {
        clock.advance(1000);
        await backupDatabase({ database, config: config(), clock }, 'daily');
      }
      const names = readdirSync(config().dbBackupDir);
      expect(names.filter((n) => n.endsWith('-daily.tar.gz'))).toHaveLength(2);
      expect(names.filter((n) => n.endsWith('-manual.tar.gz'))).toHaveLength(1);
      expect(names.filter((n) => n.includes('.partial'))).toEqual([]);
    });

    it('refuses a bundle of a newer schema, or a file that is no bundle, and changes nothing', async () => {
      const counts = await rowCounts(database.db);
      const newer = await writeBundle({
        source: database.source,
        dir: join(dataDir, 'elsewhere'),
        label: 'manual',
        at: clock.now(),
        felisVersion: '99.0.0',
        schemaVersion: shippedSchemaVersion() + 1,
      });
      await expect(restoreFromBundle({ database, config: config(), clock }, join(newer.dir, newer.name))).rejects.toThrow(/newer/);

      const other = join(dataDir, 'other.tar.gz');
      writeFileSync(other, 'not a bundle');
      await expect(restoreFromBundle({ database, config: config(), clock }, other)).rejects.toThrow();
      expect(await rowCounts(database.db)).toEqual(counts);
    });

    it('takes a pre-migrate bundle only when migrations would change a database that holds a schema', async () => {
      const log = { info: () => {} };
      const applied = await appliedSchemaVersion(database.db);
      // Up to date: no bundle, and the migrator is not run at all.
      let migrations = 0;
      const counted = { ...database, migrate: () => ((migrations += 1), database.migrate()) };
      expect(await migrateWithSafetyDump({ database: counted, config: config(), clock }, log, applied)).toBeUndefined();
      expect(migrations).toBe(0);
      const safety = await migrateWithSafetyDump({ database, config: config(), clock }, log, applied + 1);
      expect(safety).toMatchObject({ label: 'pre-migrate', schema_version: applied });
      expect((await dbBackupStatus(database.db, clock.now())).last).toMatchObject({ name: safety!.name, label: 'pre-migrate' });
    });
  });
}
