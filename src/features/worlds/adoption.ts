import { eq } from 'drizzle-orm';
import { worldJobs } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { finishJob } from './jobs.js';
import { endOf, outcomeOf, planOf, WORLD_JOB_LABEL, worldJobName, type WorldJobClient } from './kubernetes-job.js';
import { heldFresh, keepLock, releaseLock } from './lock.js';
import { JobFailure } from './run-job.js';
import { settlePlan } from './settle.js';

type TendDeps = Pick<Deps, 'database' | 'clock' | 'worlds' | 'log'>;

/**
 * Every replica, every lock sweep: a world Job that runs keeps its world locked whoever started it
 * (a replica that died stops renewing, the others renew); a Job that ended while its starter was
 * gone (its lock lapsed) is settled here from the plan it carries, and its lock freed. Resolves
 * false when the cluster could not be read: the caller must then not judge jobs orphaned.
 */
export async function tendWorldJobs(deps: TendDeps, client: WorldJobClient): Promise<boolean> {
  let jobs;
  try {
    jobs = await client.listJobs(WORLD_JOB_LABEL);
  } catch (err) {
    deps.log.warn({ err }, 'world jobs could not be listed; orphaned jobs are not judged this round');
    return false;
  }
  const { db } = deps.database;
  for (const job of jobs) {
    const plan = planOf(job);
    if (!plan) continue;
    const now = deps.clock.now();
    try {
      if (!endOf(job)) {
        if (!(await keepLock(db, now, plan.serverName, plan.jobId, plan.kind))) {
          deps.log.error({ server: plan.serverName, job: plan.jobId }, 'a world job runs but another holder has its world lock');
        }
        continue;
      }
      const [row] = await db.select({ state: worldJobs.state }).from(worldJobs).where(eq(worldJobs.id, plan.jobId));
      if (row?.state === 'running' && (await heldFresh(db, now, plan.serverName, plan.jobId))) continue; // its starter settles it
      if (row?.state === 'running') await adopt(deps, client, job, plan);
      else await client.deleteJob(worldJobName(plan.serverName));
    } catch (err) {
      deps.log.warn({ err, server: plan.serverName, job: plan.jobId }, 'a world job could not be tended; tried again next sweep');
    }
  }
  return true;
}

async function adopt(deps: TendDeps, client: WorldJobClient, job: Parameters<typeof endOf>[0], plan: NonNullable<ReturnType<typeof planOf>>) {
  const { db } = deps.database;
  if (!(await keepLock(db, deps.clock.now(), plan.serverName, plan.jobId, plan.kind))) return;
  deps.log.info({ server: plan.serverName, job: plan.jobId, kind: plan.kind }, 'settling a world job whose starter is gone');
  try {
    const outcome = await outcomeOf(client, job, plan.jobId);
    try {
      const result = await settlePlan(deps, plan, outcome);
      await finishJob(deps, plan.jobId, { state: 'succeeded', ...result });
    } catch (err) {
      if (!(err instanceof JobFailure)) throw err;
      await finishJob(deps, plan.jobId, { state: 'failed', message: err.message });
    }
    await client.deleteJob(worldJobName(plan.serverName));
  } finally {
    await releaseLock(db, plan.serverName, plan.jobId);
  }
}
