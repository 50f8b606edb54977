import { and, count, desc, eq, lt } from 'drizzle-orm';
import { worldBackups } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { ownerOf } from '../servers/index.js';
import { createBackupRow, findBackup, verifyBackup, type BackupRow } from './backups.js';
import { runnerOf, type WorldJobPlan } from './job-runner.js';
import { newId, recordJob } from './jobs.js';
import { lockHolderKind } from './lock.js';
import { startWorldJob, type JobDeps } from './run-job.js';
import { settlePlan } from './settle.js';

/** 503 when the store cannot be reached, before a job is started that could only fail. */
async function requireStore(deps: Pick<Deps, 'worlds' | 'log'>): Promise<void> {
  try {
    await deps.worlds.store.ping();
  } catch (err) {
    deps.log.warn({ err }, 'backup store unreachable');
    throw new DomainError('unavailable', 'The backup store cannot be reached.');
  }
}

/** A manual (or break-glass) backup of a stopped world, as a job. */
export async function startBackup(deps: JobDeps, serverName: string, requestedBy: string) {
  const runner = runnerOf(deps);
  await requireStore(deps);
  return startWorldJob(deps, { serverName, kind: 'backup', lockKind: 'backup', requestedBy, busy: () => runner.busy(serverName) }, async (jobId) => {
    const formerOwner = await ownerOf(deps.database.db, serverName);
    const row = await createBackupRow(deps, { serverName, reason: 'manual', formerOwner });
    const plan: WorldJobPlan = { jobId, serverName, kind: 'backup', step: { op: 'backup', key: row.storageKey }, backupId: row.id };
    return settlePlan(deps, plan, await runner.run(plan));
  });
}

/** The backup a restore names, or the newest restorable one of the server: 404 no_backup, 409 backup_corrupt. */
export async function backupToRestore(deps: Pick<Deps, 'database'>, serverName: string, backupId: string | undefined): Promise<BackupRow> {
  let backup: BackupRow | undefined;
  if (backupId) {
    backup = await findBackup(deps, backupId);
    if (backup && (backup.serverName !== serverName || backup.status !== 'present')) backup = undefined;
  } else {
    [backup] = await deps.database.db
      .select()
      .from(worldBackups)
      .where(and(eq(worldBackups.serverName, serverName), eq(worldBackups.status, 'present'), eq(worldBackups.corrupt, false)))
      .orderBy(desc(worldBackups.createdAt))
      .limit(1);
  }
  if (!backup) throw new DomainError('no_backup', `No backup of ${serverName} to restore.`);
  if (backup.corrupt) throw new DomainError('backup_corrupt', 'This backup failed its read-back and cannot be restored.');
  return backup;
}

/**
 * Restores a backup into a stopped world. The backup must have been taken of a world owned by the
 * server's current owner (or of an unowned world into an unowned server): nobody restores another
 * person's world into theirs. A `pre_restore` snapshot is taken first unless told not to; if it
 * fails, nothing is restored.
 */
export async function startRestore(
  deps: JobDeps,
  input: { serverName: string; owner: string | undefined; requestedBy: string; backupId?: string; safetySnapshot: boolean },
) {
  const runner = runnerOf(deps);
  const backup = await backupToRestore(deps, input.serverName, input.backupId);
  if ((backup.formerOwner ?? undefined) !== input.owner) {
    throw new DomainError('forbidden', 'This backup was taken of a world with another owner.');
  }
  await requireStore(deps);
  const { serverName } = input;
  const started = await startWorldJob(
    deps,
    { serverName, kind: 'restore', lockKind: 'restore', requestedBy: input.requestedBy, backupId: backup.id, busy: () => runner.busy(serverName) },
    async (jobId) => {
      let snapshot: WorldJobPlan['snapshot'];
      let snapshotKey: string | undefined;
      if (input.safetySnapshot) {
        const row = await createBackupRow(deps, { serverName, reason: 'pre_restore', formerOwner: await ownerOf(deps.database.db, serverName) });
        snapshot = { backupId: row.id, jobId: newId(deps.random) };
        snapshotKey = row.storageKey;
        await recordJob(deps, { id: snapshot.jobId, serverName, kind: 'backup', lockHolder: jobId, requestedBy: input.requestedBy });
      }
      const plan: WorldJobPlan = {
        jobId,
        serverName,
        kind: 'restore',
        step: { op: 'restore', key: backup.storageKey, sha256: backup.sha256!, ...(snapshotKey ? { snapshotKey } : {}) },
        backupId: backup.id,
        ...(snapshot ? { snapshot } : {}),
      };
      return settlePlan(deps, plan, await runner.run(plan));
    },
  );
  return { ...started, backup };
}

export interface BackupPage {
  rows: BackupRow[];
  total: number;
}

/** Present backups newest first: all of them for staff, else those of worlds the user owned. */
export async function listBackups(
  deps: Pick<Deps, 'database'>,
  scope: { userId: string; staff: boolean },
  query: { server?: string; limit: number; offset: number },
): Promise<BackupPage> {
  const where = and(
    eq(worldBackups.status, 'present'),
    scope.staff ? undefined : eq(worldBackups.formerOwner, scope.userId),
    query.server ? eq(worldBackups.serverName, query.server) : undefined,
  );
  const { db } = deps.database;
  const [rows, [total]] = await Promise.all([
    db.select().from(worldBackups).where(where).orderBy(desc(worldBackups.createdAt), desc(worldBackups.id)).limit(query.limit).offset(query.offset),
    db.select({ n: count() }).from(worldBackups).where(where),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/** Expires one backup in the caller's scope (404 no_backup otherwise) and deletes its archive. */
export async function deleteBackup(deps: Pick<Deps, 'database' | 'worlds' | 'log'>, id: string, scope: { userId: string; staff: boolean }) {
  const backup = await findBackup(deps, id);
  if (!backup || backup.status !== 'present' || (!scope.staff && backup.formerOwner !== scope.userId)) {
    throw new DomainError('no_backup', 'No such backup.');
  }
  if ((await lockHolderKind(deps.database.db, backup.serverName)) === 'restore') {
    throw new DomainError('restore_in_progress', `A restore of ${backup.serverName} may be reading this backup.`);
  }
  await expire(deps, backup);
}

async function expire(deps: Pick<Deps, 'database' | 'worlds' | 'log'>, backup: BackupRow): Promise<void> {
  await deps.database.db.update(worldBackups).set({ status: 'expired' }).where(eq(worldBackups.id, backup.id));
  await deps.worlds.store.delete(backup.storageKey).catch((err: unknown) =>
    deps.log.warn({ err, backup_id: backup.id }, 'could not delete an expired archive; it is unreachable from the API'),
  );
}

/** Expires every present backup past its `expires_at` (idempotent; any replica may run it). */
export async function sweepExpiredBackups(deps: Pick<Deps, 'database' | 'worlds' | 'log' | 'clock'>): Promise<number> {
  const due = await deps.database.db
    .select()
    .from(worldBackups)
    .where(and(eq(worldBackups.status, 'present'), lt(worldBackups.expiresAt, deps.clock.now())));
  for (const backup of due) await expire(deps, backup);
  return due.length;
}

/** Re-verifies present backups whose last good read-back is older than `maxAgeMs` (or never was). */
export async function reverifyBackups(deps: Pick<Deps, 'database' | 'worlds' | 'log' | 'clock'>, maxAgeMs: number, batch = 10): Promise<number> {
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
