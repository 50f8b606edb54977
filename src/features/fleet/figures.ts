import { backgroundLoop, type BackgroundTask } from '../../coordination/index.js';
import { buildsFinished } from '../builds/index.js';
import { pendingDeliveries } from '../notifications/index.js';
import { newestRecords } from '../operations/index.js';
import { backupFigures, backupJobsFinished } from '../worlds/index.js';
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
    const [backups, records, pending] = await Promise.all([backupFigures(db), newestRecords(db), pendingDeliveries(db)]);
    const snapshot = empty();
    snapshot.refreshedAt = now;
    for (const row of backups.verified) if (row.at) snapshot.newestVerified.set(row.server, new Date(row.at));
    for (const row of backups.sizes) snapshot.newestSize.set(row.server, Number(row.size));
    for (const row of backups.byStatus) snapshot.backupsByStatus.set(row.status, Number(row.n));
    snapshot.backupsByStatus.set('corrupt', backups.corrupt);
    snapshot.newestDatabaseBackup = records.databaseBackup;
    snapshot.newestUpdateReport = records.updateReport;
    snapshot.webhooksPending = pending;
    this.#snapshot = snapshot;

    const from = this.#countedUpTo;
    this.#countedUpTo = now;
    if (!from || !metrics) return;
    await this.#countFinished(deps, metrics, from, now);
  }

  async #countFinished(deps: Pick<Deps, 'database'>, metrics: FleetMetrics, from: Date, to: Date): Promise<void> {
    const { db } = deps.database;
    const [jobs, { finished: finishedBuilds, scans }] = await Promise.all([backupJobsFinished(db, from, to), buildsFinished(db, from, to)]);
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
