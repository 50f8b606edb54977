import { and, count, desc, eq, gt, isNotNull, lte, max } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { worldBackups, worldJobs } from '../../db/schema/worlds.js';

/** What the worlds' tables say about backups, for the fleet's figures (a few aggregate queries). */
export async function backupFigures(db: Queryable) {
  const [verified, sizes, byStatus, corrupt] = await Promise.all([
    db
      .select({ server: worldBackups.serverName, at: max(worldBackups.verifiedAt) })
      .from(worldBackups)
      .where(and(eq(worldBackups.status, 'present'), eq(worldBackups.corrupt, false), isNotNull(worldBackups.verifiedAt)))
      .groupBy(worldBackups.serverName),
    db
      .selectDistinctOn([worldBackups.serverName], { server: worldBackups.serverName, size: worldBackups.sizeBytes })
      .from(worldBackups)
      .where(eq(worldBackups.status, 'present'))
      .orderBy(worldBackups.serverName, desc(worldBackups.createdAt)),
    db.select({ status: worldBackups.status, n: count() }).from(worldBackups).groupBy(worldBackups.status),
    db.select({ n: count() }).from(worldBackups).where(eq(worldBackups.corrupt, true)),
  ]);
  return { verified, sizes, byStatus, corrupt: Number(corrupt[0]?.n ?? 0) };
}

/** The backup jobs that finished in (from, to]. */
export function backupJobsFinished(db: Queryable, from: Date, to: Date) {
  return db
    .select({ state: worldJobs.state, startedAt: worldJobs.startedAt, finishedAt: worldJobs.finishedAt })
    .from(worldJobs)
    .where(and(eq(worldJobs.kind, 'backup'), gt(worldJobs.finishedAt, from), lte(worldJobs.finishedAt, to)));
}
