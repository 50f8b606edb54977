import { eq } from 'drizzle-orm';
import type { StepOutcome, WorldJobInCluster, WorldJobPlan, WorldJobRunner } from '../../adapters/cluster/world-jobs.js';
import { worldJobs } from '../../db/schema/worlds.js';
import { settleBackup, settleRestore } from './backups/index.js';
import { settleExport } from './exports/index.js';
import { finishJob, heldFresh, JobFailure, keepLock, lockHolderKind, releaseLock, type JobOutcome, type SettleDeps } from './jobs/index.js';
import { settleReclaim } from './reclaim/index.js';

/** Records what a world job's step reported, by the job's kind, from its plan alone. */
function settle(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  switch (plan.kind) {
    case 'backup':
      return settleBackup(deps, plan, outcome);
    case 'reclaim':
      return settleReclaim(deps, plan, outcome);
    case 'restore':
      return settleRestore(deps, plan, outcome);
    case 'export':
      return settleExport(deps, plan, outcome);
  }
}

/**
 * Every replica, every lock sweep: a world Job that runs keeps its world locked whoever started it
 * (a replica that died stops renewing, the others renew); a Job that ended while its starter was
 * gone (its lock lapsed) is settled here from the plan it carries, and its lock freed. Resolves
 * false when the cluster could not be read: the caller must then not judge jobs orphaned.
 */
export async function tendWorldJobs(deps: SettleDeps, runner: Pick<WorldJobRunner, 'listJobs'>): Promise<boolean> {
  let jobs;
  try {
    jobs = await runner.listJobs();
  } catch (err) {
    deps.log.warn({ err }, 'world jobs could not be listed; orphaned jobs are not judged this round');
    return false;
  }
  const { db } = deps.database;
  for (const job of jobs) {
    const { plan } = job;
    const now = deps.clock.now();
    try {
      // A server move's Job (no job row of its own) is the move's: it waits for it and settles it,
      // and a move that died is retried whole (src/features/nodes/moves.ts).
      if ((await lockHolderKind(db, plan.serverName)) === 'migration') continue;
      if (!job.ended) {
        if (!(await keepLock(db, now, plan.serverName, plan.jobId, plan.kind))) {
          deps.log.error({ server: plan.serverName, job: plan.jobId }, 'a world job runs but another holder has its world lock');
        }
        continue;
      }
      const [row] = await db.select({ state: worldJobs.state }).from(worldJobs).where(eq(worldJobs.id, plan.jobId));
      if (row?.state === 'running' && (await heldFresh(db, now, plan.serverName, plan.jobId))) continue; // its starter settles it
      if (row?.state === 'running') await adopt(deps, job);
      else await job.remove();
    } catch (err) {
      deps.log.warn({ err, server: plan.serverName, job: plan.jobId }, 'a world job could not be tended; tried again next sweep');
    }
  }
  return true;
}

async function adopt(deps: SettleDeps, job: WorldJobInCluster) {
  const { db } = deps.database;
  const { plan } = job;
  if (!(await keepLock(db, deps.clock.now(), plan.serverName, plan.jobId, plan.kind))) return;
  deps.log.info({ server: plan.serverName, job: plan.jobId, kind: plan.kind }, 'settling a world job whose starter is gone');
  try {
    const outcome = await job.outcome();
    try {
      const result = await settle(deps, plan, outcome);
      await finishJob(deps, plan.jobId, { state: 'succeeded', ...result });
    } catch (err) {
      if (!(err instanceof JobFailure)) throw err;
      await finishJob(deps, plan.jobId, { state: 'failed', message: err.message });
    }
    await job.remove();
  } finally {
    await releaseLock(db, plan.serverName, plan.jobId);
  }
  deps.worlds.jobs.ended(plan.jobId);
}
