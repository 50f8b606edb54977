import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { eq } from 'drizzle-orm';
import { worldBackups } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { unpackWorld } from './archive.js';
import type { BackupRow } from './backups.js';

const STAGING = '.restore-';
const PREVIOUS = '.previous-';

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Puts a world folder back in order after a restore that died: a staging folder is removed, and a
 * world that was moved aside but never replaced is moved back. Runs before anything touches it.
 */
export async function recoverWorldFolder(folder: string): Promise<void> {
  const parent = dirname(folder);
  const name = basename(folder);
  let siblings: string[];
  try {
    siblings = await readdir(parent);
  } catch {
    return;
  }
  for (const sibling of siblings) {
    if (sibling.startsWith(name + STAGING)) await rm(join(parent, sibling), { recursive: true, force: true });
  }
  for (const sibling of siblings) {
    if (!sibling.startsWith(name + PREVIOUS)) continue;
    const path = join(parent, sibling);
    if (await isDir(folder)) await rm(path, { recursive: true, force: true });
    else await rename(path, folder);
  }
}

/** A backup that may not be restored (corrupt, or its bytes no longer hash to its sha-256). */
export class BackupCorruptError extends Error {
  override name = 'BackupCorruptError';
}

/**
 * Replaces a world folder by what `fill` writes into a staging folder beside it, by two renames,
 * only once `fill` resolves. Whatever fails before them (a broken stream, a kill, a hash mismatch)
 * leaves the world as it was, and recoverWorldFolder clears what is left.
 */
export async function swapInRestoredWorld(folder: string, tag: string, fill: (staging: string) => Promise<void>): Promise<void> {
  await recoverWorldFolder(folder);
  const staging = folder + STAGING + tag;
  await mkdir(staging, { recursive: true });
  try {
    await fill(staging);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  const previous = folder + PREVIOUS + tag;
  if (await isDir(folder)) await rename(folder, previous);
  await rename(staging, folder);
  await rm(previous, { recursive: true, force: true });
}

/**
 * Restores a backup into a world folder. The archive is unpacked into a staging folder beside the
 * world and hashed on the way; only a complete, matching archive replaces the world. A mismatch
 * marks the backup corrupt.
 */
export async function restoreFolder(
  deps: Pick<Deps, 'database' | 'worlds' | 'log'>,
  backup: BackupRow,
  folder: string,
  jobId: string,
  signal?: AbortSignal,
): Promise<void> {
  if (backup.corrupt || !backup.sha256) throw new BackupCorruptError('the backup is marked corrupt');
  await swapInRestoredWorld(folder, jobId, async (staging) => {
    const { sha256 } = await unpackWorld(await deps.worlds.store.get(backup.storageKey), staging, signal);
    if (sha256 !== backup.sha256) {
      await markCorrupt(deps, backup, 'backup does not match its sha-256 at restore: marked corrupt');
      throw new BackupCorruptError('the archive does not match its sha-256');
    }
  });
}

export async function markCorrupt(deps: Pick<Deps, 'database' | 'log'>, backup: Pick<BackupRow, 'id' | 'serverName'>, why: string): Promise<void> {
  await deps.database.db.update(worldBackups).set({ corrupt: true }).where(eq(worldBackups.id, backup.id));
  deps.log.error({ backup_id: backup.id, server: backup.serverName }, why);
}
