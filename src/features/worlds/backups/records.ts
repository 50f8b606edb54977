import { eq } from 'drizzle-orm';
import { worldBackups } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { hashStream } from './archive.js';
import { newId } from './jobs.js';
import { JobFailure } from './run-job.js';
import { readWorldTimes } from './settings.js';
import { runVolumeStep, type ArchiveFacts } from './volume-ops.js';

export type BackupRow = typeof worldBackups.$inferSelect;
export type BackupReason = BackupRow['reason'];

const DAY = 24 * 60 * 60 * 1000;
/** The default time each kind of backup is kept (settings `backup_retention_*_days` override it). */
export const RETENTION_MS: Record<BackupReason, number> = {
  manual: 30 * DAY,
  pre_restore: 7 * DAY,
  inactive_15d: 90 * DAY,
};

type EngineDeps = Pick<Deps, 'database' | 'clock' | 'random' | 'worlds' | 'log'>;

/** The store's name for a backup's archive: ours alone, never shown. */
const storageKey = (serverName: string, id: string) => `worlds/${serverName}/${id}.tar.gz`;

/** The row of a backup about to be taken (`backing_up`), its expiry from the reason's retention setting. */
export async function createBackupRow(
  deps: Pick<Deps, 'database' | 'clock' | 'random'>,
  input: { serverName: string; reason: BackupReason; formerOwner?: string },
): Promise<BackupRow> {
  const id = newId(deps.random);
  const now = deps.clock.now();
  const { retentionMs } = await readWorldTimes(deps.database.db);
  const [row] = await deps.database.db
    .insert(worldBackups)
    .values({
      id,
      serverName: input.serverName,
      formerOwner: input.formerOwner ?? null,
      reason: input.reason,
      status: 'backing_up',
      storageKey: storageKey(input.serverName, id),
      createdAt: now,
      expiresAt: new Date(now.getTime() + retentionMs[input.reason]),
    })
    .returning();
  return row!;
}

/**
 * Records what the archive step reported: `present` with its sha-256, size and skipped entries, and
 * `verified_at` when the read-back matched, else `corrupt` (the caller treats it as failed).
 */
export async function recordArchive(deps: Pick<Deps, 'database' | 'clock' | 'log'>, backupId: string, facts: ArchiveFacts): Promise<BackupRow> {
  const [row] = await deps.database.db
    .update(worldBackups)
    .set({
      status: 'present',
      sizeBytes: facts.size,
      sha256: facts.sha256,
      skippedEntries: facts.skipped,
      ...(facts.verified ? { verifiedAt: deps.clock.now() } : { corrupt: true }),
    })
    .where(eq(worldBackups.id, backupId))
    .returning();
  if (!facts.verified) deps.log.error({ backup_id: backupId, server: row?.serverName }, 'backup read-back does not match its sha-256: marked corrupt');
  return row!;
}

/** A backup that could not be taken: `failed`, and whatever reached the store is deleted. */
export async function failBackup(deps: Pick<Deps, 'database' | 'worlds'>, backupId: string): Promise<void> {
  const [row] = await deps.database.db.update(worldBackups).set({ status: 'failed' }).where(eq(worldBackups.id, backupId)).returning();
  if (row) await deps.worlds.store.delete(row.storageKey).catch(() => undefined);
}

/**
 * Archives a world folder to the store in this process: tar.gz streamed through a sha-256 into the
 * store, then read back from the store and hashed again. A read-back that differs marks the backup
 * corrupt. A failure marks it failed and throws a JobFailure with the step's code. The caller holds
 * the world's lock.
 */
export async function backUpFolder(
  deps: EngineDeps,
  input: { serverName: string; folder: string; reason: BackupReason; formerOwner?: string },
): Promise<BackupRow> {
  const row = await createBackupRow(deps, input);
  const outcome = await runVolumeStep(deps.worlds.store, input.folder, { op: 'backup', key: row.storageKey }, {
    tag: row.id,
    onError: (err) => deps.log.error({ err, server: input.serverName, backup_id: row.id }, 'backup failed'),
  });
  if (!outcome.ok || !outcome.archive) {
    await failBackup(deps, row.id);
    throw new JobFailure(outcome.ok ? 'failed: the archive step reported nothing' : `${outcome.code}: ${outcome.message}`);
  }
  return recordArchive(deps, row.id, outcome.archive);
}

/**
 * Reads a backup back from the store and hashes it. A match records `verified_at`; a mismatch or a
 * missing object sets `corrupt`, for good: a corrupt backup is never restored.
 */
export async function verifyBackup(deps: Pick<EngineDeps, 'database' | 'clock' | 'worlds' | 'log'>, backup: BackupRow): Promise<BackupRow> {
  let matches: boolean;
  try {
    const { sha256 } = await hashStream(await deps.worlds.store.get(backup.storageKey));
    matches = sha256 === backup.sha256;
  } catch (err) {
    if ((err as Error).name !== 'BackupNotFoundError') throw err;
    matches = false;
  }
  const set = matches ? { verifiedAt: deps.clock.now() } : { corrupt: true };
  if (!matches) deps.log.error({ backup_id: backup.id, server: backup.serverName }, 'backup read-back does not match its sha-256: marked corrupt');
  const [row] = await deps.database.db.update(worldBackups).set(set).where(eq(worldBackups.id, backup.id)).returning();
  return row!;
}

export async function findBackup(deps: Pick<Deps, 'database'>, id: string): Promise<BackupRow | undefined> {
  const [row] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.id, id));
  return row;
}
