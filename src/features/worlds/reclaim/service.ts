import type { StepOutcome, WorldJobPlan, WorldJobRunner } from '../../../adapters/cluster/world-jobs.js';
import { DomainError } from '../../../lib/errors.js';
import { createBackupRow, recordArchiveOutcome } from '../backups/index.js';
import { JobFailure, jobOf, runnerOf, startWorldJob, type JobDeps, type JobOutcome, type SettleDeps } from '../jobs/index.js';
import { readWorldTimes, WORLD_SETTINGS } from '../settings/index.js';
import { lastInUse, ownerOf } from '../../servers/index.js';

/** The default idle time before a world is reclaimed (setting `idle_reclaim_days`). */
export const IDLE_RECLAIM_MS = WORLD_SETTINGS.idleReclaimDays.fallback * 24 * 60 * 60 * 1000;

/**
 * Idle reclaim: a world whose server sat stopped `idle_reclaim_days` (15) is archived (`inactive_15d`, read back and
 * verified by the backup itself) and only then its volume is released. The former owner keeps the
 * backup and can restore it. A failed or corrupt archive keeps the volume.
 */
export async function reclaimIdleWorlds(deps: JobDeps): Promise<string[]> {
  let runner: WorldJobRunner;
  try {
    runner = runnerOf(deps);
  } catch {
    return []; // no volume can be reached (the reason was logged at start)
  }
  const cache = deps.serverCache;
  if (!cache.synced) return [];
  const { idleReclaimMs } = await readWorldTimes(deps.database.db);
  const cutoff = deps.clock.now().getTime() - idleReclaimMs;
  const reclaimed: string[] = [];
  for (const server of cache.all()) {
    const { spec, status } = server.resource;
    const serverName = spec.name;
    if (server.system || status.phase !== 'Stopped' || spec.desiredState === 'Running') continue;
    if (!(await runner.exists(serverName))) continue;
    const used = await lastInUse(deps.database.db, serverName);
    if (!used || used.getTime() > cutoff) continue;
    try {
      const job = { serverName, kind: 'reclaim', lockKind: 'reclaim', requestedBy: 'idle-reclaim', busy: () => runner.busy(serverName) } as const;
      const { done, jobId } = await startWorldJob(deps, job, async (jobId) => {
        const row = await createBackupRow(deps, { serverName, reason: 'inactive_15d', formerOwner: await ownerOf(deps.database.db, serverName) });
        const plan: WorldJobPlan = { jobId, serverName, kind: 'reclaim', step: { op: 'backup', key: row.storageKey }, backupId: row.id };
        return settleReclaim(deps, plan, await runner.run(plan));
      });
      await done;
      if ((await jobOf(deps.database.db, jobId))?.state === 'succeeded') reclaimed.push(serverName);
    } catch (err) {
      if (err instanceof DomainError) continue; // held or woken meanwhile: try again on the next pass
      throw err;
    }
  }
  return reclaimed;
}

/** Records a reclaim's archive; only a verified one gives the volume back. */
export async function settleReclaim(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  const backup = await recordArchiveOutcome(deps, plan.backupId!, outcome);
  if (backup.corrupt || backup.verifiedAt === null) throw new JobFailure('the archive did not verify; the volume is kept');
  await runnerOf(deps).release(plan.serverName);
  return { backupId: backup.id };
}
