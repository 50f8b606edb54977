import type { WorldJobPlan } from '../../../adapters/cluster/world-jobs.js';
import type { WorldVolumeRef } from '../../../adapters/cluster/world-volumes.js';
import { ownerOf } from '../../servers/index.js';
import { JobFailure, newId, runnerOf, stepFailed, type JobDeps } from '../jobs/index.js';
import { createBackupRow, findBackup, recordArchiveOutcome, requireStore } from './records.js';

/**
 * The world steps of a server move between node-local volumes (src/features/nodes/moves.ts): the
 * world archived into the backup store and read back whole, the archive restored into the volume
 * made on the target node and checked against its sha-256 as it unpacks, the old volume released.
 * Each runs where world jobs run (this process on the simulated cluster's folders, a Job pinned to
 * the volume's node on Kubernetes). The caller holds the world's lock across all of them.
 */

/**
 * Archives the server's world from its current volume into the store (a `pre_restore` backup, so
 * it is listed and expires as a safety copy does) and reads it back: resolves with the backup
 * only once the read-back matched its sha-256.
 */
export async function archiveForMove(deps: JobDeps, serverName: string): Promise<{ backupId: string; sha256: string }> {
  const runner = runnerOf(deps);
  await requireStore(deps);
  const row = await createBackupRow(deps, { serverName, reason: 'pre_restore', formerOwner: await ownerOf(deps.database.db, serverName) });
  const plan: WorldJobPlan = { jobId: newId(deps.random), serverName, kind: 'backup', step: { op: 'backup', key: row.storageKey }, backupId: row.id };
  const backup = await recordArchiveOutcome(deps, row.id, await runner.run(plan));
  if (backup.corrupt || !backup.sha256) throw new JobFailure('backup_corrupt: the archive read back from the store does not match its sha-256');
  return { backupId: backup.id, sha256: backup.sha256 };
}

/**
 * Restores a move's archive into `volume` (a claim on the target node), replacing whatever an
 * earlier attempt left there. The step hashes the archive as it unpacks and fails unless it
 * matches the sha-256 recorded when it was read back: the new volume holds the same bytes.
 */
export async function restoreForMove(deps: JobDeps, serverName: string, backupId: string, volume: Required<WorldVolumeRef>): Promise<void> {
  const runner = runnerOf(deps);
  const backup = await findBackup(deps, backupId);
  if (!backup || backup.status !== 'present' || backup.corrupt || !backup.sha256) throw new JobFailure('backup_corrupt: the move\'s archive is gone or corrupt');
  await requireStore(deps);
  const plan: WorldJobPlan = {
    jobId: newId(deps.random),
    serverName,
    kind: 'restore',
    step: { op: 'restore', key: backup.storageKey, sha256: backup.sha256 },
    backupId,
    volume,
  };
  const outcome = await runner.run(plan);
  if (!outcome.ok) throw stepFailed(outcome);
}

/** Gives a move's old volume back (a volume already gone is fine). */
export async function releaseForMove(deps: JobDeps, serverName: string, claim: string): Promise<void> {
  await runnerOf(deps).release(serverName, claim);
}
