import { and, count, desc, eq, gt, isNotNull, lte, max } from 'drizzle-orm';
import { backgroundLoop, type BackgroundTask } from '../../coordination/index.js';
import { builds, buildScans } from '../../db/schema/builds.js';
import { webhookDeliveries } from '../../db/schema/notifications.js';
import { dbBackups, updateReports } from '../../db/schema/operations.js';
import { worldBackups, worldJobs } from '../../db/schema/worlds.js';
import type { Deps } from '../../deps.js';
import type { FleetMetrics } from './metrics.js';

export const SEVERITY_NAMES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'UNKNOWN'] as const;

/** What the database says about the fleet, as of the last refresh: read by the collectors. */
export interface FleetSnapshot {
  refreshedAt: Date | undefined;
  /** Server → when its newest verified, uncorrupted, present backup was verified. */
  newestVerified: Map<string, Date>;
  /** Server → size of its newest present backup. */
  newestSize: Map<string, number>;
  /** Backup records by status, and `corrupt`. */
  backupsByStatus: Map<string, number>;
  newestDatabaseBackup: Date | undefined;
  newestUpdateReport: Date | undefined;
  webhooksPending: number;
}

const empty = (): FleetSnapshot => ({
  refreshedAt: undefined,
  newestVerified: new Map(),
  newestSize: new Map(),
  backupsByStatus: new Map(['backing_up', 'present', 'failed', 'expired', 'corrupt'].map((s) => [s, 0])),
  newestDatabaseBackup: undefined,
  newestUpdateReport: undefined,
  webhooksPending: 0,
});

/**
 * The fleet's figures kept in the database, read by a background round on every replica (a few
 * aggregate queries every METRICS_REFRESH_SECONDS) so that a scrape never queries. Rows finished
 * since the previous round (backup jobs, builds, scans) move the counters and histograms: each
 * replica counts every finished row once from its own start on.
 */
export class FleetFigures {
  #snapshot: FleetSnapshot = empty();
  /** Finished rows up to here have been counted. Unset: the first round only sets it. */
  #countedUpTo: Date | undefined;

  current(): FleetSnapshot {
    return this.#snapshot;
  }

  async refresh(deps: Pick<Deps, 'database' | 'clock'>, metrics: FleetMetrics | undefined): Promise<void> {
    const { db } = deps.database;
    const now = deps.clock.now();
    const [verified, sizes, byStatus, corrupt, dbBackup, report, pending] = await Promise.all([
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
      db.select({ at: max(dbBackups.at) }).from(dbBackups),
      db.select({ at: max(updateReports.checkedAt) }).from(updateReports),
      db.select({ n: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.status, 'pending')),
    ]);
    const snapshot = empty();
    snapshot.refreshedAt = now;
    for (const row of verified) if (row.at) snapshot.newestVerified.set(row.server, new Date(row.at));
    for (const row of sizes) snapshot.newestSize.set(row.server, Number(row.size));
    for (const row of byStatus) snapshot.backupsByStatus.set(row.status, Number(row.n));
    snapshot.backupsByStatus.set('corrupt', Number(corrupt[0]?.n ?? 0));
    snapshot.newestDatabaseBackup = dbBackup[0]?.at ? new Date(dbBackup[0].at) : undefined;
    snapshot.newestUpdateReport = report[0]?.at ? new Date(report[0].at) : undefined;
    snapshot.webhooksPending = Number(pending[0]?.n ?? 0);
    this.#snapshot = snapshot;

    const from = this.#countedUpTo;
    this.#countedUpTo = now;
    if (!from || !metrics) return;
    await this.#countFinished(deps, metrics, from, now);
  }

  async #countFinished(deps: Pick<Deps, 'database'>, metrics: FleetMetrics, from: Date, to: Date): Promise<void> {
    const { db } = deps.database;
    const [jobs, finishedBuilds, scans] = await Promise.all([
      db
        .select({ state: worldJobs.state, startedAt: worldJobs.startedAt, finishedAt: worldJobs.finishedAt })
        .from(worldJobs)
        .where(and(eq(worldJobs.kind, 'backup'), gt(worldJobs.finishedAt, from), lte(worldJobs.finishedAt, to))),
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
    for (const job of jobs) {
      if (job.state === 'running' || !job.finishedAt) continue;
      metrics.backupJobs.inc({ outcome: job.state });
      metrics.backupDuration.observe(Math.max(0, (job.finishedAt.getTime() - job.startedAt.getTime()) / 1000));
    }
    for (const row of finishedBuilds) metrics.builds.inc({ outcome: row.status }, Number(row.n));
    for (const { summary } of scans) {
      const counts = (summary as { counts?: Record<string, number> } | null)?.counts ?? {};
      for (const severity of SEVERITY_NAMES) if (counts[severity]) metrics.findings.inc({ severity }, counts[severity]);
    }
  }
}

/** Every replica refreshes its own figures (each serves its own /metrics). */
export function fleetFiguresTask(deps: Pick<Deps, 'database' | 'clock' | 'log' | 'config'>, replica: string, metrics: FleetMetrics): BackgroundTask {
  const { figures } = metrics;
  return backgroundLoop(
    { db: deps.database.db, clock: deps.clock, log: deps.log, replica },
    { name: 'fleet_figures', replicas: 'every', intervalMs: deps.config.metricsRefreshSeconds * 1000, firstAfterMs: 0, round: () => figures.refresh(deps, metrics) },
  );
}
