import { createReadStream } from 'node:fs';
import { lstat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { BackupStore } from '../../adapters/backup-store/types.js';
import { DomainError } from '../../lib/errors.js';
import { archiveWorld, hashing, hashStream, unpackWorld } from './archive.js';
import { worldPath } from './files.js';
import { recoverWorldFolder, swapInRestoredWorld } from './restore.js';
import { isErrno } from '../../lib/errno.js';

/**
 * What a world job does on the volume, as plain data: the same step runs in this process on a
 * local folder (simulated cluster) or in a Kubernetes Job's pod by `src/cli/world-job.ts` with the
 * claim mounted. Keys are the store's names, made by the service, never by a client.
 */
export const volumeStepSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('backup'), key: z.string() }),
  z.strictObject({ op: z.literal('restore'), key: z.string(), sha256: z.string().regex(/^[a-f0-9]{64}$/), snapshotKey: z.string().optional() }),
  z.strictObject({ op: z.literal('export'), key: z.string(), path: z.string().max(4096) }),
]);
export type VolumeStep = z.infer<typeof volumeStepSchema>;

const archiveFactsSchema = z.strictObject({
  sha256: z.string().regex(/^[a-f0-9]{64}$/),
  size: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  /** The archive read back from the store hashed to `sha256`. */
  verified: z.boolean(),
});
export type ArchiveFacts = z.infer<typeof archiveFactsSchema>;

/** The codes a step reports; the job's message starts with the code. */
export const STEP_CODES = ['backup_store_full', 'volume_full', 'backup_corrupt', 'not_found', 'maintenance_in_progress', 'failed'] as const;
export type StepCode = (typeof STEP_CODES)[number];

/** A step's outcome: small JSON, so it fits a container's termination message (4 KiB). */
export const stepOutcomeSchema = z.union([
  z.strictObject({ ok: z.literal(true), archive: archiveFactsSchema.optional(), snapshot: archiveFactsSchema.optional() }),
  z.strictObject({ ok: z.literal(false), code: z.enum(STEP_CODES), message: z.string().max(500), snapshot: archiveFactsSchema.optional() }),
]);
export type StepOutcome = z.infer<typeof stepOutcomeSchema>;
export type StepFailure = Extract<StepOutcome, { ok: false }>;

export const failure = (code: StepCode, message: string, snapshot?: ArchiveFacts): StepFailure => ({
  ok: false,
  code,
  message: message.slice(0, 500),
  ...(snapshot ? { snapshot } : {}),
});

/** A restore's archive does not hash to what the service recorded. */
class ArchiveMismatch extends Error {}

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
    if ((err as Error).name !== 'BackupNotFoundError') throw err;
  }
  return { sha256, size, skipped: archive.skipped(), verified };
}

async function restoreFrom(store: BackupStore, folder: string, key: string, sha256: string, tag: string, signal?: AbortSignal): Promise<void> {
  await swapInRestoredWorld(folder, tag, async (staging) => {
    const unpacked = await unpackWorld(await store.get(key), staging, signal);
    if (unpacked.sha256 !== sha256) throw new ArchiveMismatch('the archive does not match its sha-256');
  });
}

async function exportFrom(store: BackupStore, folder: string, key: string, path: string): Promise<void> {
  const target = await worldPath(folder, path);
  const stat = await lstat(target.abs).catch(() => undefined);
  if (!stat || !(stat.isFile() || stat.isDirectory())) throw new DomainError('not_found', `Nothing to download at ${target.shown || 'the world root'}.`);
  let body: Readable;
  if (stat.isFile()) body = createReadStream(target.abs);
  else {
    const hasher = hashing();
    void pipeline(archiveWorld(target.abs).stream, hasher).catch((err: unknown) => hasher.destroy(err as Error));
    body = hasher;
  }
  await store.put(key, body);
}

/** What a thrown error means to the service: a code and a message without a stack or a path. */
export function failureOf(err: unknown): StepFailure {
  const name = (err as Error | undefined)?.name;
  if (err instanceof ArchiveMismatch) return failure('backup_corrupt', err.message);
  if (name === 'BackupStoreFullError') return failure('backup_store_full', 'the backup store is full');
  if (name === 'BackupNotFoundError') return failure('backup_corrupt', 'the archive is missing from the store');
  if (isErrno(err, 'ENOSPC', 'EDQUOT')) return failure('volume_full', 'the world volume is full');
  if (err instanceof DomainError && err.code === 'not_found') return failure('not_found', err.message);
  if (err instanceof DomainError && err.code === 'bad_path') return failure('not_found', 'the path cannot be exported');
  return failure('failed', 'the job failed; its log has the details');
}

/**
 * Runs one step on a world folder. A dead restore is repaired first; a restore's `pre_restore`
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
