import type { Deps } from '../../../deps.js';
import { runVolumeStep, swapInRestoredWorld, unpackWorld } from '../volumes/index.js';
import { createBackupRow, markCorrupt, recordArchiveOutcome, type BackupReason, type BackupRow } from './records.js';
import type { WorldsParts } from '../volumes/index.js';

/**
 * A backup and a restore of a local folder in this process, outside a world job: the archive
 * engine as the engine tests and the bench drive it. The caller holds the world's lock.
 */

/** A backup that may not be restored (corrupt, or its bytes no longer hash to its sha-256). */
export class BackupCorruptError extends Error {
  override name = 'BackupCorruptError';
}

/**
 * Archives a world folder to the store: tar.gz streamed through a sha-256 into the store, then
 * read back from the store and hashed again. A read-back that differs marks the backup corrupt. A
 * failure marks it failed and throws a JobFailure with the step's code.
 */
export async function backUpFolder(
  deps: Pick<Deps & WorldsParts, 'database' | 'clock' | 'random' | 'worlds' | 'log'>,
  input: { serverName: string; folder: string; reason: BackupReason; formerOwner?: string },
): Promise<BackupRow> {
  const row = await createBackupRow(deps, input);
  const outcome = await runVolumeStep(deps.worlds.store, input.folder, { op: 'backup', key: row.storageKey }, {
    tag: row.id,
    onError: (err) => deps.log.error({ err, server: input.serverName, backup_id: row.id }, 'backup failed'),
  });
  return recordArchiveOutcome(deps, row.id, outcome);
}

/**
 * Restores a backup into a world folder. The archive is unpacked into a staging folder beside the
 * world and hashed on the way; only a complete, matching archive replaces the world. A mismatch
 * marks the backup corrupt.
 */
export async function restoreFolder(
  deps: Pick<Deps & WorldsParts, 'database' | 'worlds' | 'log' | 'clock'>,
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
