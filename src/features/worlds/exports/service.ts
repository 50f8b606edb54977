import { lstat } from 'node:fs/promises';
import { and, eq, lt } from 'drizzle-orm';
import { worldExports } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import type { BackupRow } from './backups.js';
import { worldPath } from './files.js';
import { runnerOf, type WorldJobPlan } from './job-runner.js';
import { newId } from './jobs.js';
import { startWorldJob, type JobDeps } from './run-job.js';
import { readWorldTimes } from './settings.js';
import { settlePlan } from './settle.js';

export type ExportRow = typeof worldExports.$inferSelect;

const stamp = (d: Date) => d.toISOString().slice(0, 19).replaceAll(':', '-');

async function insertExport(deps: Pick<Deps, 'database' | 'clock'>, ttlMs: number, row: Omit<ExportRow, 'createdAt' | 'expiresAt' | 'message'>) {
  const now = deps.clock.now();
  const [created] = await deps.database.db
    .insert(worldExports)
    .values({ ...row, createdAt: now, expiresAt: new Date(now.getTime() + ttlMs) })
    .returning();
  return created!;
}

/** A backup's own archive, ready at once (the caller checked the backup is theirs to read). */
export async function exportBackup(deps: Pick<Deps, 'database' | 'clock' | 'random'>, backup: BackupRow, userId: string) {
  if (backup.corrupt) throw new DomainError('backup_corrupt', 'This backup failed its read-back.');
  const { exportTtlMs } = await readWorldTimes(deps.database.db);
  return insertExport(deps, exportTtlMs, {
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
 * world's lock and kept in the store until it expires. Where the volume is not a local folder
 * (Kubernetes) only the whole world can be exported: a part needs the file routes' checks first.
 */
export async function exportWorld(deps: JobDeps, serverName: string, userId: string, path = '') {
  const runner = runnerOf(deps);
  let isFile = false;
  let name = serverName;
  if (deps.worlds.folders) {
    const target = await worldPath(await deps.worlds.folders.folder(serverName), path);
    const stat = await lstat(target.abs).catch(() => undefined);
    if (!stat || !(stat.isFile() || stat.isDirectory())) throw new DomainError('not_found', `Nothing to download at ${target.shown || 'the world root'}.`);
    isFile = stat.isFile();
    name = target.segments.at(-1) ?? serverName;
  } else if (path !== '') {
    throw new DomainError('unavailable', 'World files cannot be reached from this service.');
  }
  const ticket = newId(deps.random);
  const { exportTtlMs } = await readWorldTimes(deps.database.db);
  const row = await insertExport(deps, exportTtlMs, {
    ticket,
    serverName,
    requestedBy: userId,
    source: 'world',
    state: 'preparing',
    storageKey: `exports/${ticket}`,
    filename: isFile ? name : `${name}-${stamp(deps.clock.now())}.tar.gz`,
    contentType: isFile ? 'application/octet-stream' : 'application/gzip',
  });
  await startWorldJob(deps, { serverName, kind: 'export', lockKind: 'export', requestedBy: userId, busy: () => runner.busy(serverName) }, async (jobId) => {
    const plan: WorldJobPlan = { jobId, serverName, kind: 'export', step: { op: 'export', key: row.storageKey, path }, exportTicket: ticket };
    return settlePlan(deps, plan, await runner.run(plan));
  }).catch(async (err: unknown) => {
    await deps.database.db.delete(worldExports).where(eq(worldExports.ticket, ticket));
    throw err;
  });
  return row;
}

/** The caller's own export: anyone else's ticket is 404, as if it did not exist. */
export async function ownExport(deps: Pick<Deps, 'database' | 'clock'>, ticket: string, userId: string): Promise<ExportRow> {
  const [row] = await deps.database.db.select().from(worldExports).where(and(eq(worldExports.ticket, ticket), eq(worldExports.requestedBy, userId)));
  if (!row || row.state === 'expired' || row.expiresAt <= deps.clock.now()) throw new DomainError('not_found', 'No such export.');
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

