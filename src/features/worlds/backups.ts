import { eq } from 'drizzle-orm';
import { pipeline } from 'node:stream/promises';
import { worldBackups } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { archiveWorld, hashing, hashStream } from './archive.js';
import { newId } from './jobs.js';

export type BackupRow = typeof worldBackups.$inferSelect;
export type BackupReason = BackupRow['reason'];

const DAY = 24 * 60 * 60 * 1000;
/** How long each kind of backup is kept (api-extensions: retention per reason). */
export const RETENTION_MS: Record<BackupReason, number> = {
  manual: 30 * DAY,
  pre_restore: 7 * DAY,
  inactive_15d: 90 * DAY,
};

type EngineDeps = Pick<Deps, 'database' | 'clock' | 'random' | 'worlds' | 'log'>;

/** The store's name for a backup's archive: ours alone, never shown. */
const storageKey = (serverName: string, id: string) => `worlds/${serverName}/${id}.tar.gz`;

/**
 * Archives a world folder to the store: tar.gz streamed through a sha-256 into the store, then
 * read back from the store and hashed again. A read-back that differs marks the backup corrupt
 * (and the caller treats it as failed). The caller holds the world's lock.
 */
export async function backUpFolder(
  deps: EngineDeps,
  input: { serverName: string; folder: string; reason: BackupReason; formerOwner?: string },
): Promise<BackupRow> {
  const { db } = deps.database;
  const id = newId(deps.random);
  const key = storageKey(input.serverName, id);
  const now = deps.clock.now();
  const [row] = await db
    .insert(worldBackups)
    .values({
      id,
      serverName: input.serverName,
      formerOwner: input.formerOwner ?? null,
      reason: input.reason,
      status: 'backing_up',
      storageKey: key,
      createdAt: now,
      expiresAt: new Date(now.getTime() + RETENTION_MS[input.reason]),
    })
    .returning();
  try {
    const archive = archiveWorld(input.folder);
    const hasher = hashing();
    const feeding = pipeline(archive.stream, hasher).catch((err: unknown) => hasher.destroy(err as Error));
    const { size } = await deps.worlds.store.put(key, hasher);
    await feeding;
    const [done] = await db
      .update(worldBackups)
      .set({ status: 'present', sizeBytes: size, sha256: hasher.digest(), skippedEntries: archive.skipped() })
      .where(eq(worldBackups.id, id))
      .returning();
    return await verifyBackup(deps, done!);
  } catch (err) {
    await db.update(worldBackups).set({ status: 'failed' }).where(eq(worldBackups.id, row!.id));
    await deps.worlds.store.delete(key).catch(() => undefined);
    throw err;
  }
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
