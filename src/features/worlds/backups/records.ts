import { and, eq, lt } from 'drizzle-orm';
import { BackupNotFoundError } from '../../../adapters/backup-store/types.js';
import type { ArchiveFacts, StepOutcome } from '../../../adapters/cluster/world-jobs.js';
import { worldBackups } from '../../../db/schema/worlds.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { newId, stepFailed, JobFailure } from '../jobs/index.js';
import { readWorldTimes } from '../settings/index.js';
import { hashStream } from '../volumes/index.js';
import { raiseEvent } from '../../notifications/index.js';
import type { WorldsParts } from '../volumes/index.js';

export type BackupRow = typeof worldBackups.$inferSelect;
export type BackupReason = BackupRow['reason'];

/** The expiry of a scheduled backup: none by date (the retention tiers decide). */
const SCHEDULED_NEVER_EXPIRES = new Date('9999-12-31T00:00:00.000Z');

/** The store's name for a backup's archive: ours alone, never shown. */
const storageKey = (serverName: string, id: string) => `worlds/${serverName}/${id}.tar.gz`;

/** The backup store answers, or 503 (logged) before a job or step is started that could only fail. */
export async function requireStore(deps: Pick<Deps & WorldsParts, 'worlds' | 'log'>): Promise<void> {
  try {
    await deps.worlds.store.ping();
  } catch (err) {
    deps.log.warn({ err }, 'backup store unreachable');
    throw new DomainError('unavailable', 'The backup store cannot be reached.');
  }
}

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
      // A scheduled backup is kept by its retention tiers (retention.ts), not by a date.
      expiresAt: input.reason === 'scheduled' ? SCHEDULED_NEVER_EXPIRES : new Date(now.getTime() + retentionMs[input.reason]),
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
  if (!facts.verified) {
    deps.log.error({ backup_id: backupId, server: row?.serverName }, 'backup read-back does not match its sha-256: marked corrupt');
    if (row) await raiseBackupEvent(deps, 'backup.corrupt', row, 'its read-back does not match its sha-256');
  }
  return row!;
}

/** A backup that could not be taken: `failed`, and whatever reached the store is deleted. */
export async function failBackup(deps: Pick<Deps & WorldsParts, 'database' | 'worlds' | 'clock'>, backupId: string): Promise<void> {
  const [row] = await deps.database.db.update(worldBackups).set({ status: 'failed' }).where(eq(worldBackups.id, backupId)).returning();
  if (!row) return;
  await raiseBackupEvent(deps, 'backup.failed', row, 'the backup could not be taken');
  await deps.worlds.store.delete(row.storageKey).catch(() => undefined);
}

/** A failed or corrupt backup, for the webhooks (one event per backup and kind). */
async function raiseBackupEvent(deps: Pick<Deps, 'database' | 'clock'>, type: 'backup.failed' | 'backup.corrupt', row: Pick<BackupRow, 'id' | 'serverName' | 'reason'>, why: string): Promise<void> {
  await raiseEvent(deps.database.db, {
    type,
    at: deps.clock.now(),
    key: `${type}:${row.id}`,
    summary: `A backup of ${row.serverName} ${type === 'backup.failed' ? 'failed' : 'is corrupt'}: ${why}.`,
    subject: { kind: 'backup', id: row.id },
    data: { server: row.serverName, reason: row.reason },
  });
}

/**
 * The archive a backup step reported, recorded on the backup's row; a step that made none fails
 * the backup and throws a JobFailure with the step's code.
 */
export async function recordArchiveOutcome(deps: Pick<Deps & WorldsParts, 'database' | 'clock' | 'worlds' | 'log'>, backupId: string, outcome: StepOutcome): Promise<BackupRow> {
  if (!outcome.ok || !outcome.archive) {
    await failBackup(deps, backupId);
    throw outcome.ok ? new JobFailure('failed: the archive step reported nothing') : stepFailed(outcome);
  }
  return recordArchive(deps, backupId, outcome.archive);
}

/**
 * Reads a backup back from the store and hashes it. A match records `verified_at`; a mismatch or a
 * missing object sets `corrupt`, for good: a corrupt backup is never restored.
 */
export async function verifyBackup(deps: Pick<Deps & WorldsParts, 'database' | 'clock' | 'worlds' | 'log'>, backup: BackupRow): Promise<BackupRow> {
  let matches: boolean;
  try {
    const { sha256 } = await hashStream(await deps.worlds.store.get(backup.storageKey));
    matches = sha256 === backup.sha256;
  } catch (err) {
    if (!(err instanceof BackupNotFoundError)) throw err;
    matches = false;
  }
  const set = matches ? { verifiedAt: deps.clock.now() } : { corrupt: true };
  if (!matches) deps.log.error({ backup_id: backup.id, server: backup.serverName }, 'backup read-back does not match its sha-256: marked corrupt');
  const [row] = await deps.database.db.update(worldBackups).set(set).where(eq(worldBackups.id, backup.id)).returning();
  if (!matches) await raiseBackupEvent(deps, 'backup.corrupt', backup, 'a later read-back does not match its sha-256');
  return row!;
}

export async function markCorrupt(deps: Pick<Deps, 'database' | 'log' | 'clock'>, backup: Pick<BackupRow, 'id' | 'serverName' | 'reason'>, why: string): Promise<void> {
  await deps.database.db.update(worldBackups).set({ corrupt: true }).where(eq(worldBackups.id, backup.id));
  deps.log.error({ backup_id: backup.id, server: backup.serverName }, why);
  await raiseBackupEvent(deps, 'backup.corrupt', backup, why);
}

export async function findBackup(deps: Pick<Deps, 'database'>, id: string): Promise<BackupRow | undefined> {
  const [row] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.id, id));
  return row;
}

/** `expired`, and its archive deleted (a failure is logged: the API cannot reach it any more). */
export async function expire(deps: Pick<Deps & WorldsParts, 'database' | 'worlds' | 'log'>, backup: BackupRow): Promise<void> {
  await deps.database.db.update(worldBackups).set({ status: 'expired' }).where(eq(worldBackups.id, backup.id));
  await deps.worlds.store.delete(backup.storageKey).catch((err: unknown) =>
    deps.log.warn({ err, backup_id: backup.id }, 'could not delete an expired archive; it is unreachable from the API'),
  );
}

/** Expires every present backup past its `expires_at` (idempotent; any replica may run it). */
export async function sweepExpiredBackups(deps: Pick<Deps & WorldsParts, 'database' | 'worlds' | 'log' | 'clock'>): Promise<number> {
  const due = await deps.database.db
    .select()
    .from(worldBackups)
    .where(and(eq(worldBackups.status, 'present'), lt(worldBackups.expiresAt, deps.clock.now())));
  for (const backup of due) await expire(deps, backup);
  return due.length;
}

/** Re-verifies present backups whose last good read-back is older than `maxAgeMs` (or never was). */
export async function reverifyBackups(deps: Pick<Deps & WorldsParts, 'database' | 'worlds' | 'log' | 'clock'>, maxAgeMs: number, batch = 10): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - maxAgeMs);
  const due = await deps.database.db
    .select()
    .from(worldBackups)
    .where(and(eq(worldBackups.status, 'present'), eq(worldBackups.corrupt, false), lt(worldBackups.verifiedAt, before)))
    .orderBy(worldBackups.verifiedAt)
    .limit(batch);
  for (const backup of due) await verifyBackup(deps, backup);
  return due.length;
}
