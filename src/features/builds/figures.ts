import { and, count, gt, lte } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { builds, buildScans } from '../../db/schema/builds.js';

/** The builds that finished in (from, to] by outcome, and the scans recorded then, for the fleet's figures. */
export async function buildsFinished(db: Queryable, from: Date, to: Date) {
  const [finished, scans] = await Promise.all([
    db
      .select({ status: builds.status, n: count() })
      .from(builds)
      .where(and(gt(builds.finishedAt, from), lte(builds.finishedAt, to)))
      .groupBy(builds.status),
    db
      .select({ summary: buildScans.summary })
      .from(buildScans)
      .where(and(gt(buildScans.scannedAt, from), lte(buildScans.scannedAt, to))),
  ]);
  return { finished, scans };
}
