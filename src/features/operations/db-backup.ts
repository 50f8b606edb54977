import { rm } from 'node:fs/promises';
import { openBundle, pruneBundles, writeBundle, type BundleLabel, type BundleManifest, type BundleRecord } from '../../db/bundles.js';
import { appliedSchemaVersion, restoreDatabase, shippedSchemaVersion } from '../../db/dump.js';
import type { Deps } from '../../deps.js';
import type { Logger } from '../../lib/logger.js';
import { SERVICE_VERSION } from '../../version.js';
import { recordDbBackup } from './records.js';

type BackupDeps = Pick<Deps, 'database' | 'clock' | 'config'>;

async function bundleOf(deps: BackupDeps, label: BundleLabel): Promise<BundleRecord> {
  return writeBundle({
    source: deps.database.source,
    dir: deps.config.dbBackupDir,
    label,
    at: deps.clock.now(),
    felisVersion: SERVICE_VERSION,
    schemaVersion: await appliedSchemaVersion(deps.database.db),
  });
}

/** Dumps the database into a labelled bundle, records it for the status route, and keeps the newest `DB_BACKUP_KEEP` of that label. */
export async function backupDatabase(deps: BackupDeps, label: BundleLabel): Promise<BundleRecord> {
  const record = await bundleOf(deps, label);
  await recordDbBackup(deps.database.db, record, deps.clock.now());
  await pruneBundles(deps.config.dbBackupDir, label, deps.config.dbBackupKeep);
  return record;
}

export class RestoreRefused extends Error {
  override name = 'RestoreRefused';
}

/**
 * Restores a bundle over the configured database, after a `pre-restore` bundle of what is there now.
 * Refused: a bundle of the other database kind, or of a newer schema than this build runs (its
 * migrations would be unknown here). The service must be stopped: the handle is closed on return.
 */
export async function restoreFromBundle(deps: BackupDeps, file: string): Promise<{ restored: BundleManifest; safety: BundleRecord }> {
  const { database } = deps;
  const { manifest, dumpPath, folder } = await openBundle(file);
  try {
    if (manifest.kind !== database.kind) {
      throw new RestoreRefused(`${file} holds a ${manifest.kind} database; the configured one is ${database.kind}`);
    }
    const shipped = shippedSchemaVersion();
    if (manifest.schema_version > shipped) {
      throw new RestoreRefused(`${file} has schema version ${manifest.schema_version}, newer than this build's ${shipped}: restore it with a newer Felis`);
    }
    if (database.source.kind === 'pglite' && !database.dir) throw new RestoreRefused('a memory: database cannot be restored into');
    const safety = await backupDatabase(deps, 'pre-restore');
    await database.close();
    await restoreDatabase(database.source.kind === 'postgres' ? database.source : { kind: 'pglite', dir: database.dir! }, dumpPath);
    return { restored: manifest, safety };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Applies pending migrations, after a `pre-migrate` bundle when they would change a database that
 * already holds a schema. The bundle is recorded once the migrations made its table exist. A
 * database that has every shipped migration is left to itself: the migrator would read and hash
 * every migration file to find nothing to do (150-200 ms of each start, issue 29's note).
 */
export async function migrateWithSafetyDump(
  deps: BackupDeps,
  log: Pick<Logger, 'info'>,
  shipped = shippedSchemaVersion(),
): Promise<BundleRecord | undefined> {
  const { database } = deps;
  const applied = await appliedSchemaVersion(database.db).catch(() => 0); // no migration table yet: empty
  if (applied === shipped) return undefined;
  let safety: BundleRecord | undefined;
  if (applied > 0 && applied < shipped) {
    safety = await bundleOf(deps, 'pre-migrate');
    log.info({ bundle: safety.name, dir: safety.dir, schema_version: applied }, 'database bundle taken before migrating');
  }
  await database.migrate();
  if (safety) await recordDbBackup(database.db, safety, deps.clock.now());
  return safety;
}
