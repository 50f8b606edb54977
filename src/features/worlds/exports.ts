import { createReadStream } from 'node:fs';
import { lstat } from 'node:fs/promises';

import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { and, eq, lt } from 'drizzle-orm';
import { worldExports } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { ApiError } from '../../http/errors.js';
import { archiveWorld, hashing } from './archive.js';
import type { BackupRow } from './backups.js';
import { worldPath } from './files.js';
import { newId } from './jobs.js';
import { recoverWorldFolder } from './restore.js';
import { startWorldJob, type JobDeps } from './run-job.js';
import { localFolders } from './access.js';

export type ExportRow = typeof worldExports.$inferSelect;
/** How long an export can be downloaded. */
export const EXPORT_TTL_MS = 24 * 60 * 60 * 1000;

const stamp = (d: Date) => d.toISOString().slice(0, 19).replaceAll(':', '-');

async function insertExport(deps: Pick<Deps, 'database' | 'clock'>, row: Omit<ExportRow, 'createdAt' | 'expiresAt' | 'message'>) {
  const now = deps.clock.now();
  const [created] = await deps.database.db
    .insert(worldExports)
    .values({ ...row, createdAt: now, expiresAt: new Date(now.getTime() + EXPORT_TTL_MS) })
    .returning();
  return created!;
}

/** A backup's own archive, ready at once (the caller checked the backup is theirs to read). */
export async function exportBackup(deps: Pick<Deps, 'database' | 'clock' | 'random'>, backup: BackupRow, userId: string) {
  if (backup.corrupt) throw new ApiError('backup_corrupt', 'This backup failed its read-back.');
  return insertExport(deps, {
    ticket: newId(deps.random),
    serverName: backup.serverName,
    requestedBy: userId,
    source: 'backup',
    state: 'ready',
    storageKey: backup.storageKey,
    filename: `${backup.serverName}-${stamp(backup.createdAt)}.tar.gz`,
    contentType: 'application/gzip',
  });
}

/**
 * An archive of a stopped world, or of one file or folder in it (`path`), made by a job under the
 * world's lock and kept in the store until it expires.
 */
export async function exportWorld(deps: JobDeps, serverName: string, userId: string, path = '') {
  const root = await localFolders(deps).folder(serverName);
  const target = await worldPath(root, path);
  const stat = await lstat(target.abs).catch(() => undefined);
  if (!stat || !(stat.isFile() || stat.isDirectory())) throw new ApiError('not_found', `Nothing to download at ${target.shown || 'the world root'}.`);
  const ticket = newId(deps.random);
  const isFile = stat.isFile();
  const name = target.segments.at(-1) ?? serverName;
  const row = await insertExport(deps, {
    ticket,
    serverName,
    requestedBy: userId,
    source: 'world',
    state: 'preparing',
    storageKey: `exports/${ticket}`,
    filename: isFile ? name : `${name}-${stamp(deps.clock.now())}.tar.gz`,
    contentType: isFile ? 'application/octet-stream' : 'application/gzip',
  });
  const setState = (state: ExportRow['state'], message?: string) =>
    deps.database.db.update(worldExports).set({ state, message: message ?? null }).where(eq(worldExports.ticket, ticket));
  await startWorldJob(deps, { serverName, kind: 'export', lockKind: 'export', requestedBy: userId }, async () => {
    try {
      await recoverWorldFolder(root);
      let body: Readable;
      if (isFile) body = createReadStream(target.abs);
      else {
        const hasher = hashing();
        void pipeline(archiveWorld(target.abs).stream, hasher).catch((err: unknown) => hasher.destroy(err as Error));
        body = hasher;
      }
      await deps.worlds.store.put(row.storageKey, body);
      await setState('ready');
    } catch (err) {
      await setState('failed', 'the archive could not be made');
      throw err;
    }
  }).catch(async (err: unknown) => {
    await deps.database.db.delete(worldExports).where(eq(worldExports.ticket, ticket));
    throw err;
  });
  return row;
}

/** The caller's own export: anyone else's ticket is 404, as if it did not exist. */
export async function ownExport(deps: Pick<Deps, 'database' | 'clock'>, ticket: string, userId: string): Promise<ExportRow> {
  const [row] = await deps.database.db.select().from(worldExports).where(and(eq(worldExports.ticket, ticket), eq(worldExports.requestedBy, userId)));
  if (!row || row.state === 'expired' || row.expiresAt <= deps.clock.now()) throw new ApiError('not_found', 'No such export.');
  return row;
}

/** Expires exports past their time; an archive made for an export is deleted with it. */
export async function sweepExpiredExports(deps: Pick<Deps, 'database' | 'clock' | 'worlds' | 'log'>): Promise<number> {
  const due = await deps.database.db
    .update(worldExports)
    .set({ state: 'expired' })
    .where(and(lt(worldExports.expiresAt, deps.clock.now()), eq(worldExports.source, 'world')))
    .returning();
  for (const row of due) {
    await deps.worlds.store.delete(row.storageKey).catch((err: unknown) => deps.log.warn({ err, ticket: row.ticket }, 'could not delete an expired export'));
  }
  return due.length;
}

