import { createReadStream } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BackupNotFoundError, BackupStoreFullError, type BackupStore } from '../../../adapters/backup-store/types.js';
import { failure, type ArchiveFacts, type StepFailure, type StepOutcome, type VolumeStep } from '../../../adapters/cluster/world-jobs.js';
import { DomainError } from '../../../lib/errors.js';
import { isErrno } from '../../../lib/errno.js';
import { archiveWorld, hashing, hashStream, unpackWorld } from './archive.js';
import { worldPath } from './paths.js';

/**
 * A world job's step on a world folder (runVolumeStep at the end): a backup, a restore with its
 * `pre_restore` snapshot, an export. A restore swaps the whole folder in only once the archive
 * unpacked and matched; a restore that died is put back in order before anything touches the
 * world again.
 */

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
    // A failed unpack rejects while the unpacker may still finish writing a file or a folder into
    // staging: the removal meets a folder that is no longer empty (ENOTEMPTY) and looks again. What
    // it still cannot remove, recoverWorldFolder clears before the next step; the fill's own error
    // is the one reported, never the cleanup's.
    await rm(staging, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 }).catch(() => undefined);
    throw err;
  }
  const previous = folder + PREVIOUS + tag;
  if (await isDir(folder)) await rename(folder, previous);
  await rename(staging, folder);
  await rm(previous, { recursive: true, force: true });
}

/** A restore's archive does not hash to what the service recorded. */
class ArchiveMismatch extends Error {}

/** A gzip (node:zlib `Z_…`) or tar (`TAR_…`) error: the bytes read are not a readable archive. */
function archiveUnreadable(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('TAR_'));
}

/** Archives a folder into the store and reads it back: the facts the service records. */
async function archiveTo(store: BackupStore, folder: string, key: string): Promise<ArchiveFacts> {
  const archive = archiveWorld(folder);
  const hasher = hashing();
  const feeding = pipeline(archive.stream, hasher).catch((err: unknown) => hasher.destroy(err as Error));
  const { size } = await store.put(key, hasher);
  await feeding;
  const sha256 = hasher.digest();
  let verified = false;
  try {
    verified = (await hashStream(await store.get(key))).sha256 === sha256;
  } catch (err) {
    if (!(err instanceof BackupNotFoundError)) throw err;
  }
  return { sha256, size, skipped: archive.skipped(), verified };
}

async function restoreFrom(store: BackupStore, folder: string, key: string, sha256: string, tag: string, signal?: AbortSignal): Promise<void> {
  await swapInRestoredWorld(folder, tag, async (staging) => {
    const source = await store.get(key);
    let unpacked: { sha256: string };
    try {
      unpacked = await unpackWorld(source, staging, signal);
    } catch (err) {
      // The archive's own bytes failed (gzip or tar cannot read them): it is corrupt for good,
      // whatever its hash says; a store, a disk or an abort failing is not the archive's fault.
      if (archiveUnreadable(err)) throw new ArchiveMismatch(`the archive cannot be unpacked (${(err as { code: string }).code})`);
      // Damaged bytes can also fail further on (a garbled header, a name the disk refuses): when the
      // stored archive no longer hashes to what was recorded, it is the archive's fault all the same.
      if (await storedArchiveChanged(store, key, sha256)) throw new ArchiveMismatch('the archive does not match its sha-256');
      throw err;
    }
    if (unpacked.sha256 !== sha256) throw new ArchiveMismatch('the archive does not match its sha-256');
  });
}

/** Whether the stored archive's bytes no longer hash to `sha256`; false when that cannot be told. */
async function storedArchiveChanged(store: BackupStore, key: string, sha256: string): Promise<boolean> {
  try {
    return (await hashStream(await store.get(key))).sha256 !== sha256;
  } catch {
    return false;
  }
}

/** What a download names in a world folder: a file or a folder (404 not_found otherwise). */
export async function downloadTarget(folder: string, path: string) {
  const target = await worldPath(folder, path);
  const stat = await lstat(target.abs).catch(() => undefined);
  if (!stat || !(stat.isFile() || stat.isDirectory())) throw new DomainError('not_found', `Nothing to download at ${target.shown || 'the world root'}.`);
  return { ...target, isFile: stat.isFile() };
}

async function exportFrom(store: BackupStore, folder: string, key: string, path: string): Promise<void> {
  const target = await downloadTarget(folder, path);
  let body: Readable;
  if (target.isFile) body = createReadStream(target.abs);
  else {
    const hasher = hashing();
    void pipeline(archiveWorld(target.abs).stream, hasher).catch((err: unknown) => hasher.destroy(err as Error));
    body = hasher;
  }
  await store.put(key, body);
}

/** What a thrown error means to the service: a code and a message without a stack or a path. */
function failureOf(err: unknown): StepFailure {
  if (err instanceof ArchiveMismatch) return failure('backup_corrupt', err.message);
  if (err instanceof BackupStoreFullError) return failure('backup_store_full', 'the backup store is full');
  if (err instanceof BackupNotFoundError) return failure('backup_corrupt', 'the archive is missing from the store');
  if (isErrno(err, 'ENOSPC', 'EDQUOT')) return failure('volume_full', 'the world volume is full');
  if (err instanceof DomainError && err.code === 'not_found') return failure('not_found', err.message);
  if (err instanceof DomainError && err.code === 'bad_path') return failure('not_found', 'the path cannot be exported');
  return failure('failed', 'the job failed; its log has the details');
}

/**
 * Runs one step on a world folder: in this process (the simulated cluster's folders), or in a
 * world Job's pod (src/cli/world-job.ts) on the mounted claim. A dead restore is repaired first; a restore's `pre_restore`
 * snapshot must be stored and read back whole before anything of the world is replaced.
 * Never throws: every failure is an outcome (the caller logs `onError` for the details).
 */
export async function runVolumeStep(
  store: BackupStore,
  folder: string,
  step: VolumeStep,
  options: { tag: string; signal?: AbortSignal; onError?: (err: unknown) => void },
): Promise<StepOutcome> {
  let snapshot: ArchiveFacts | undefined;
  try {
    await recoverWorldFolder(folder);
    switch (step.op) {
      case 'backup':
        return { ok: true, archive: await archiveTo(store, folder, step.key) };
      case 'export':
        await exportFrom(store, folder, step.key, step.path);
        return { ok: true };
      case 'restore':
        if (step.snapshotKey) {
          // A snapshot that fails reports its own code and no facts; the restore does not start.
          snapshot = await archiveTo(store, folder, step.snapshotKey);
          if (!snapshot.verified) return failure('backup_corrupt', 'the pre_restore snapshot did not read back whole', snapshot);
        }
        await restoreFrom(store, folder, step.key, step.sha256, options.tag, options.signal);
        return { ok: true, ...(snapshot ? { snapshot } : {}) };
    }
  } catch (err) {
    if (!(err instanceof ArchiveMismatch || err instanceof DomainError)) options.onError?.(err);
    const out = failureOf(err);
    return snapshot ? { ...out, snapshot } : out;
  }
}
