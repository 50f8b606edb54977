import { eq } from 'drizzle-orm';
import { worldExports } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import { failBackup, findBackup, recordArchive } from './backups.js';
import { finishJob } from './jobs.js';
import { runnerOf, type WorldJobPlan } from './job-runner.js';
import { markCorrupt } from './restore.js';
import { JobFailure, type JobOutcome } from './run-job.js';
import type { StepOutcome } from './volume-ops.js';

type SettleDeps = Pick<Deps, 'database' | 'clock' | 'worlds' | 'log'>;

const message = (outcome: Extract<StepOutcome, { ok: false }>) => `${outcome.code}: ${outcome.message}`;

/**
 * Records what a world job's step reported, by the job's kind, from the plan alone (so the replica
 * that started the job and one that adopted it settle it the same way). Resolves with the job's
 * outcome or throws a JobFailure whose message starts with the step's code.
 */
export async function settlePlan(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  switch (plan.kind) {
    case 'backup':
    case 'reclaim':
      return settleArchive(deps, plan, outcome);
    case 'restore':
      return settleRestore(deps, plan, outcome);
    case 'export':
      return settleExport(deps, plan, outcome);
  }
}

async function settleArchive(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  const backupId = plan.backupId!;
  if (!outcome.ok || !outcome.archive) {
    await failBackup(deps, backupId);
    throw new JobFailure(outcome.ok ? 'failed: the archive step reported nothing' : message(outcome));
  }
  const backup = await recordArchive(deps, backupId, outcome.archive);
  if (plan.kind === 'reclaim') {
    if (backup.corrupt || backup.verifiedAt === null) throw new JobFailure('the archive did not verify; the volume is kept');
    await runnerOf(deps).release(plan.serverName);
  } else if (backup.corrupt) {
    throw new JobFailure('backup_corrupt: the archive read back from the store does not match its sha-256');
  }
  return { backupId };
}

async function settleRestore(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  if (plan.snapshot) {
    const snap = plan.snapshot;
    const facts = outcome.snapshot;
    const taken = facts ? await recordArchive(deps, snap.backupId, facts) : undefined;
    if (taken && !taken.corrupt) await finishJob(deps, snap.jobId, { state: 'succeeded', backupId: taken.id });
    else {
      if (!taken) await failBackup(deps, snap.backupId);
      const why = taken ? 'backup_corrupt: the archive read back from the store does not match its sha-256' : outcome.ok ? 'failed: no snapshot was taken' : message(outcome);
      await finishJob(deps, snap.jobId, { state: 'failed', message: why });
      throw new JobFailure('the pre_restore snapshot failed, so nothing was restored');
    }
  }
  if (outcome.ok) return { backupId: plan.backupId };
  if (outcome.code === 'backup_corrupt') {
    const backup = await findBackup(deps, plan.backupId!);
    if (backup) await markCorrupt(deps, backup, 'backup does not match its sha-256 at restore: marked corrupt');
  }
  throw new JobFailure(message(outcome));
}

async function settleExport(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  const ticket = plan.exportTicket!;
  const setState = (state: 'ready' | 'failed', why?: string) =>
    deps.database.db.update(worldExports).set({ state, message: why ?? null }).where(eq(worldExports.ticket, ticket));
  if (outcome.ok) {
    await setState('ready');
    return {};
  }
  await setState('failed', 'the archive could not be made');
  throw new JobFailure(message(outcome));
}
