import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { StepOutcome, WorldJobPlan } from '../../../adapters/cluster/world-jobs.js';
import { worldBackups } from '../../../db/schema/worlds.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { writeAudit } from '../../audit/index.js';
import { accessOf, admits, ownerOf, requireServer, type ServerAccess } from '../../servers/index.js';
import {
  finishJob,
  isStaff,
  JobFailure,
  lockHolderKind,
  newId,
  recordJob,
  requireWorld,
  runnerOf,
  startWorldJob,
  stepFailed,
  untilRecorded,
  type Caller,
  type JobDeps,
  type JobOutcome,
  type SettleDeps,
} from '../jobs/index.js';
import { createBackupRow, expire, failBackup, findBackup, markCorrupt, recordArchive, recordArchiveOutcome, requireStore, type BackupRow } from './records.js';
import type { WorldsParts } from '../volumes/index.js';

/**
 * Who may see a backup: staff, or whoever owned the world when it was taken (their backups
 * outlive their claim). `readableBy` is the same rule as the list's filter.
 */
const mayRead = (backup: BackupRow, caller: Caller, access?: ServerAccess) =>
  isStaff(caller) || backup.formerOwner === caller.userId || (memberOwner(access) !== undefined && backup.formerOwner === memberOwner(access));
/** The owner whose backups a member reads: a member (admitted by the access rule already) reads its owner's. */
const memberOwner = (access: ServerAccess | undefined) => (access?.standing === 'member' ? access.owner : undefined);
const readableBy = (caller: Caller, owner?: string) =>
  isStaff(caller) ? undefined : owner === undefined ? eq(worldBackups.formerOwner, caller.userId) : inArray(worldBackups.formerOwner, [caller.userId, owner]);
const noBackup = () => new DomainError('no_backup', 'No such backup.');

/** A manual (or break-glass, or scheduled) backup of a stopped world, as a job. */
export async function startBackup(deps: JobDeps, serverName: string, requestedBy: string, reason: 'manual' | 'scheduled' = 'manual') {
  const runner = runnerOf(deps);
  await requireStore(deps);
  return startWorldJob(deps, { serverName, kind: 'backup', lockKind: 'backup', requestedBy, busy: () => runner.busy(serverName) }, async (jobId) => {
    const formerOwner = await ownerOf(deps.database.db, serverName);
    const row = await createBackupRow(deps, { serverName, reason, formerOwner });
    const plan: WorldJobPlan = { jobId, serverName, kind: 'backup', step: { op: 'backup', key: row.storageKey }, backupId: row.id };
    const outcome = await runner.run(plan);
      return untilRecorded(deps, plan.jobId, () => settleBackup(deps, plan, outcome));
  });
}

/** The owner's (or staff's) backup of their stopped world now. */
export async function backUpNow(deps: JobDeps, serverName: string, caller: Caller): Promise<void> {
  await requireWorld(deps, serverName, caller, 'backups.write');
  await startBackup(deps, serverName, caller.userId);
}

const OS_USER = /^[a-z_][a-z0-9_.-]{0,31}$/i;

/** An operator's backup of a stopped world, audited to the OS user they typed (or `break-glass`). */
export async function breakGlassBackup(deps: JobDeps, input: { serverName: string; osUser: string; requestId: string | null }): Promise<void> {
  if (input.osUser !== '' && !OS_USER.test(input.osUser)) throw new DomainError('bad_name', 'os_user must be a login name (letters, digits, _ . -).');
  const actor = input.osUser || 'break-glass';
  await requireServer(deps, input.serverName);
  const { jobId } = await startBackup(deps, input.serverName, actor);
  await writeAudit(deps.database.db, {
    at: deps.clock.now(),
    actor,
    action: 'break_glass_backup',
    target: input.serverName,
    detail: { job: jobId },
    requestId: input.requestId,
  });
}

/** Records what a backup's step reported: a corrupt read-back fails the job. */
export async function settleBackup(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  const backup = await recordArchiveOutcome(deps, plan.backupId!, outcome);
  if (backup.corrupt) throw new JobFailure('backup_corrupt: the archive read back from the store does not match its sha-256');
  return { backupId: backup.id };
}

/** The backup a restore names, or the newest restorable one of the server: 404 no_backup, 409 backup_corrupt. */
async function backupToRestore(deps: Pick<Deps, 'database'>, serverName: string, backupId: string | undefined): Promise<BackupRow> {
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

/** A present, sound backup of the server that the caller may read (an export of it). */
export async function readableBackup(deps: Pick<Deps, 'database'>, serverName: string, backupId: string, caller: Caller, access?: ServerAccess): Promise<BackupRow> {
  const backup = await backupToRestore(deps, serverName, backupId);
  if (!mayRead(backup, caller, access)) throw noBackup();
  return backup;
}

/** The owner's (or staff's) restore of a backup into their stopped world; see startRestore. */
export async function restoreBackup(deps: JobDeps, input: { serverName: string; caller: Caller; backupId?: string; safetySnapshot: boolean }) {
  const { owner } = await requireWorld(deps, input.serverName, input.caller, 'backups.write');
  return startRestore(deps, { serverName: input.serverName, owner, requestedBy: input.caller.userId, backupId: input.backupId, safetySnapshot: input.safetySnapshot });
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
      const outcome = await runner.run(plan);
      return untilRecorded(deps, plan.jobId, () => settleRestore(deps, plan, outcome));
    },
  );
  return { ...started, backup };
}

/**
 * Records what a restore's step reported, from the plan alone (so the replica that started the job
 * and one that adopted it settle it the same way): the `pre_restore` snapshot's own job first (if
 * it failed, nothing was restored), then the restore; a backup whose archive did not match is
 * marked corrupt.
 */
export async function settleRestore(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  if (plan.snapshot) {
    const snap = plan.snapshot;
    const facts = outcome.snapshot;
    const taken = facts ? await recordArchive(deps, snap.backupId, facts) : undefined;
    if (taken && !taken.corrupt) await finishJob(deps, snap.jobId, { state: 'succeeded', backupId: taken.id });
    else {
      if (!taken) await failBackup(deps, snap.backupId);
      const why = taken
        ? 'backup_corrupt: the archive read back from the store does not match its sha-256'
        : outcome.ok
          ? 'failed: no snapshot was taken'
          : stepFailed(outcome).message;
      await finishJob(deps, snap.jobId, { state: 'failed', message: why });
      throw new JobFailure('the pre_restore snapshot failed, so nothing was restored');
    }
  }
  if (outcome.ok) return { backupId: plan.backupId };
  if (outcome.code === 'backup_corrupt') {
    const backup = await findBackup(deps, plan.backupId!);
    if (backup) await markCorrupt(deps, backup, 'backup does not match its sha-256 at restore: marked corrupt');
  }
  throw stepFailed(outcome);
}

export interface BackupPage {
  rows: BackupRow[];
  total: number;
}

/** Present backups newest first: all of them for staff, else those of worlds the caller owned. */
export async function listBackups(deps: Pick<Deps, 'database'>, caller: Caller, query: { server?: string; limit: number; offset: number }): Promise<BackupPage> {
  const { db } = deps.database;
  // A member with backups.read who names the server also reads its owner's backups of it.
  const access = query.server && !isStaff(caller) ? await accessOf(db, query.server, caller) : undefined;
  const owner = access && admits(access, 'backups.read') ? memberOwner(access) : undefined;
  const where = and(eq(worldBackups.status, 'present'), readableBy(caller, owner), query.server ? eq(worldBackups.serverName, query.server) : undefined);
  const [rows, [total]] = await Promise.all([
    db.select().from(worldBackups).where(where).orderBy(desc(worldBackups.createdAt), desc(worldBackups.id)).limit(query.limit).offset(query.offset),
    db.select({ n: count() }).from(worldBackups).where(where),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/** Expires one backup the caller may read (404 no_backup otherwise) and deletes its archive. */
export async function deleteBackup(deps: Pick<Deps & WorldsParts, 'database' | 'worlds' | 'log'>, id: string, caller: Caller): Promise<void> {
  const backup = await findBackup(deps, id);
  if (!backup || backup.status !== 'present') throw noBackup();
  if (!mayRead(backup, caller)) {
    const access = await accessOf(deps.database.db, backup.serverName, caller);
    if (!admits(access, 'backups.write') || !mayRead(backup, caller, access)) throw noBackup();
  }
  if ((await lockHolderKind(deps.database.db, backup.serverName)) === 'restore') {
    throw new DomainError('restore_in_progress', `A restore of ${backup.serverName} may be reading this backup.`);
  }
  await expire(deps, backup);
}
