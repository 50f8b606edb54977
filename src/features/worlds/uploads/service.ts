import { statfs } from 'node:fs/promises';
import { and, eq } from 'drizzle-orm';
import { worldPathSegments } from '../../../adapters/cluster/world-files.js';
import { worldUploadSessions } from '../../../db/schema/world-files.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { isUuid } from '../../../lib/uuid.js';
import { isStaff, requireStoppedWorld, requireWorld, type Caller, type JobDeps } from '../jobs/index.js';
import { worldSetting } from '../settings/index.js';
import { localFolders, recoverWorldFolder, uploadWorldFile, worldPath } from '../volumes/index.js';
import { FileOpFailure, listFileOps, startFileOp, type FileOpView } from './ops.js';
import {
  appendPart,
  beginUpload,
  claimForCommit,
  dropUpload,
  findSession,
  finishUpload,
  listSessions,
  sessionView,
  stagedBytes,
  type UploadSessionView,
} from './sessions.js';
import { unzipInWorld } from './unzip.js';

/**
 * Large files into a world in parts, and .zip files extracted in it, on the volumes this process
 * reaches as folders (owner or staff). Each session stages its bytes in the staging store that
 * every replica reads (sessions.ts); a commit or an unzip is a world job under the world's lock.
 */

interface SessionTarget {
  serverName: string;
  caller: Caller;
  id: string;
}

/** Begins a session for a file of `size` bytes that will land at `path` (the server must be stopped). */
export async function beginWorldUpload(deps: JobDeps, input: { serverName: string; caller: Caller; path: string; size: number }): Promise<UploadSessionView> {
  const { serverName, caller } = input;
  const folders = await requireStoppedWorld(deps, serverName, caller, 'files.write', () => localFolders(deps));
  const { segments, shown } = await worldPath(await folders.folder(serverName), input.path);
  if (segments.length === 0) throw new DomainError('bad_path', 'The path must name a file inside the world folder.');
  const row = await beginUpload(deps, caller.userId, serverName, shown, input.size);
  return sessionView(deps.database.db, row);
}

/** Whose sessions a caller may list and cancel: their own; every account's, for staff (issue 43). */
const sessionsOf = (caller: Caller): string | undefined => (isStaff(caller) ? undefined : caller.userId);

/** The caller's own live sessions on this server (to resume or cancel one whose id was lost), every account's for staff, oldest first. */
export async function listWorldUploads(deps: JobDeps, serverName: string, caller: Caller): Promise<Array<UploadSessionView & { created_at: string; expires_at: string }>> {
  await requireWorld(deps, serverName, caller, 'files.write');
  const [rows, partMax] = await Promise.all([listSessions(deps, sessionsOf(caller), serverName), worldSetting(deps.database.db, 'partMaxBytes')]);
  return rows.map((row) => ({
    id: row.id,
    path: row.path,
    size: row.size,
    received: row.received,
    part_max_bytes: partMax,
    parts: row.parts,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
  }));
}

export async function uploadStatus(deps: JobDeps, { serverName, caller, id }: SessionTarget): Promise<UploadSessionView> {
  await requireWorld(deps, serverName, caller, 'files.write');
  return sessionView(deps.database.db, await findSession(deps, caller.userId, serverName, id));
}

/** Takes one part at `offset`, the request body as it arrives. */
export async function appendUploadPart(deps: JobDeps, { serverName, caller, id, offset, body }: SessionTarget & { offset: number; body: AsyncIterable<Uint8Array> }) {
  await requireWorld(deps, serverName, caller, 'files.write');
  const row = await findSession(deps, caller.userId, serverName, id);
  return sessionView(deps.database.db, await appendPart(deps, row, offset, body));
}

/** Cancels a session: the caller's own, or any account's for staff (a player's abandoned upload holding room). */
export async function cancelUpload(deps: JobDeps, { serverName, caller, id }: SessionTarget): Promise<void> {
  await requireWorld(deps, serverName, caller, 'files.write');
  await dropUpload(deps, await findSession(deps, sessionsOf(caller), serverName, id));
}

/**
 * The most a part may carry: part_max_bytes, and no more than the upload still lacks after
 * `offset` (only the caller's own session counts; a malformed request gets the plain limit and is
 * refused for what it is).
 */
export async function partLimit(deps: Pick<Deps, 'database'>, userId: string | undefined, id: string, offset: number): Promise<number> {
  const { db } = deps.database;
  const partMax = await worldSetting(db, 'partMaxBytes');
  if (!isUuid(id) || userId === undefined || !Number.isSafeInteger(offset) || offset < 0) return partMax;
  const [row] = await db
    .select({ size: worldUploadSessions.size })
    .from(worldUploadSessions)
    .where(and(eq(worldUploadSessions.id, id), eq(worldUploadSessions.userId, userId)));
  return row ? Math.max(0, Math.min(partMax, row.size - offset)) : partMax;
}

/** Lands a complete upload at its path as a world job (`overwrite` replaces a file there). */
export async function commitUpload(deps: JobDeps, { serverName, caller, id, overwrite }: SessionTarget & { overwrite: boolean }): Promise<FileOpView> {
  await requireWorld(deps, serverName, caller, 'files.write');
  const folders = localFolders(deps);
  const row = await findSession(deps, caller.userId, serverName, id);
  const claim = await claimForCommit(deps, row);
  try {
    return await startFileOp(deps, { serverName, kind: 'upload', path: row.path, total: row.size, requestedBy: caller.userId }, async ({ jobId, progress }) => {
      await claim.bind(jobId);
      const root = await folders.folder(serverName);
      await recoverWorldFolder(root);
      const fs = await statfs(root);
      const avail = fs.bavail * fs.bsize;
      if (row.size > avail) {
        throw new FileOpFailure({ code: 'volume_full', need: row.size, avail, message: `The file needs ${row.size} bytes and the world volume has ${avail} free; nothing was changed.` });
      }
      const source = stagedBytes(deps, row.id, row.parts, progress.report);
      const stored = await uploadWorldFile(root, row.path, source, { overwrite });
      await finishUpload(deps, row.id);
      return { files: 1, bytes: stored.size };
    });
  } catch (err) {
    await claim.release();
    throw err;
  }
}

/** Extracts a .zip of the world into its folder as a world job, all or nothing. */
export async function startUnzip(deps: JobDeps, { serverName, caller, path, overwrite }: { serverName: string; caller: Caller; path: string; overwrite: boolean }): Promise<FileOpView> {
  await requireWorld(deps, serverName, caller, 'files.write');
  const folders = localFolders(deps);
  const shown = worldPathSegments(path).join('/');
  if (!shown.toLowerCase().endsWith('.zip')) throw new DomainError('bad_path', 'Only a .zip file can be extracted.');
  const limits = { maxBytes: await worldSetting(deps.database.db, 'unzipMaxBytes'), maxEntries: await worldSetting(deps.database.db, 'unzipMaxEntries') };
  return startFileOp(deps, { serverName, kind: 'unzip', path: shown, total: 0, requestedBy: caller.userId }, async ({ jobId, progress }) => {
    const root = await folders.folder(serverName);
    await recoverWorldFolder(root);
    return unzipInWorld(root, shown, { overwrite, limits, workId: jobId, onTotal: progress.setTotal, onProgress: progress.report });
  });
}

/** The server's uploads and unzips: those running and those that ended in the last half hour. */
export async function listWorldFileOps(deps: JobDeps, serverName: string, caller: Caller): Promise<FileOpView[]> {
  await requireWorld(deps, serverName, caller, 'files.read');
  return listFileOps(deps, serverName);
}
