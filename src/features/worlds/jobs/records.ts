import { and, desc, eq, inArray, lt, lte, or, sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { worldExports, worldJobs } from '../../../db/schema/worlds.js';
import { noLeaseHeldBy } from '../../../coordination/index.js';
import type { Deps } from '../../../deps.js';
import type { RandomSource } from '../../../lib/random.js';
import { LOCK_LEASE_MS } from './lock.js';

export type JobKind = (typeof worldJobs.$inferSelect)['kind'];
export type JobRow = typeof worldJobs.$inferSelect;

/** A version-4 UUID from the injected randomness (ids of jobs and backups, lock holders). */
export function newId(random: RandomSource): string {
  const b = random.bytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Buffer.from(b).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export async function recordJob(
  deps: Pick<Deps, 'database' | 'clock'>,
  job: { id: string; serverName: string; kind: JobKind; lockHolder: string; requestedBy?: string; backupId?: string },
): Promise<void> {
  await deps.database.db.insert(worldJobs).values({
    id: job.id,
    serverName: job.serverName,
    kind: job.kind,
    state: 'running',
    requestedBy: job.requestedBy ?? null,
    backupId: job.backupId ?? null,
    lockHolder: job.lockHolder,
    startedAt: deps.clock.now(),
  });
}

/** Ends a running job; false when it had ended already (another replica settled it). */
export async function finishJob(
  deps: Pick<Deps, 'database' | 'clock'>,
  id: string,
  outcome: { state: 'succeeded' | 'failed'; message?: string; backupId?: string },
): Promise<boolean> {
  const rows = await deps.database.db
    .update(worldJobs)
    .set({
      state: outcome.state,
      message: outcome.message ?? null,
      finishedAt: deps.clock.now(),
      ...(outcome.backupId ? { backupId: outcome.backupId } : {}),
    })
    .where(and(eq(worldJobs.id, id), eq(worldJobs.state, 'running')))
    .returning({ id: worldJobs.id });
  return rows.length > 0;
}

/** One world job's record, for a feature that started it and waits on its outcome (a scheduled backup). */
export async function jobOf(db: Queryable, id: string): Promise<JobRow | undefined> {
  const [row] = await db.select().from(worldJobs).where(eq(worldJobs.id, id));
  return row;
}

export async function jobsOf(db: Queryable, serverName: string, limit = 50): Promise<JobRow[]> {
  return db.select().from(worldJobs).where(eq(worldJobs.serverName, serverName)).orderBy(desc(worldJobs.startedAt)).limit(limit);
}

/**
 * Jobs whose process died: still `running`, no lock held by them, and older than a lease or among
 * `freed` (the holders whose locks were just swept because their replica died: no need to wait).
 * Only a job that held a lock can be judged this way, which every world job does. An export job's
 * ticket (inserted just before its job) fails with it, so that it does not stay pending for good.
 */
export async function failOrphanedJobs(db: Queryable, now: Date, freed: string[] = []): Promise<string[]> {
  const old = lt(worldJobs.startedAt, new Date(now.getTime() - LOCK_LEASE_MS));
  const rows = await db
    .update(worldJobs)
    .set({ state: 'failed', message: 'the replica running this job stopped', finishedAt: now })
    .where(
      and(
        eq(worldJobs.state, 'running'),
        freed.length > 0 ? or(old, inArray(sql`${worldJobs.lockHolder}::text`, freed)) : old,
        noLeaseHeldBy(db, sql`${worldJobs.lockHolder}::text`),
      ),
    )
    .returning({ id: worldJobs.id, kind: worldJobs.kind, serverName: worldJobs.serverName, startedAt: worldJobs.startedAt });
  for (const job of rows.filter((r) => r.kind === 'export')) {
    await db
      .update(worldExports)
      .set({ state: 'failed', message: 'the replica making this export stopped; ask for it again' })
      .where(
        and(
          eq(worldExports.serverName, job.serverName),
          eq(worldExports.source, 'world'),
          inArray(worldExports.state, ['pending', 'preparing']),
          lte(worldExports.createdAt, job.startedAt),
        ),
      );
  }
  return rows.map((r) => r.id);
}
