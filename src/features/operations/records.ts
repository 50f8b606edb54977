import { desc, max } from 'drizzle-orm';
import type { z } from '@hono/zod-openapi';
import type { Queryable } from '../../db/client.js';
import { dbBackups, updateReports } from '../../db/schema/operations.js';
import { FRESHNESS_LIMIT_SECONDS, type DbBackupRecordSchema, type UpdateReportRecordSchema } from './schema.js';

type UpdateReportRecord = z.infer<typeof UpdateReportRecordSchema>;
type DbBackupRecord = z.infer<typeof DbBackupRecordSchema>;

/** No record, or one older than the freshness limit (26 hours; exactly 26 hours old is still fresh). */
export function isStale(at: Date | undefined, now: Date): boolean {
  return at === undefined || now.getTime() - at.getTime() > FRESHNESS_LIMIT_SECONDS * 1000;
}

export async function recordUpdateReport(db: Queryable, report: UpdateReportRecord, now: Date): Promise<void> {
  await db.insert(updateReports).values({
    checkedAt: new Date(report.checked_at),
    felis: report.felis,
    components: report.components,
    recordedAt: now,
  });
}

export async function updateReportView(db: Queryable, now: Date) {
  const [row] = await db.select().from(updateReports).orderBy(desc(updateReports.checkedAt)).limit(1);
  return {
    report: row ? { checked_at: row.checkedAt.toISOString(), felis: row.felis, components: row.components } : null,
    stale: isStale(row?.checkedAt, now),
    max_age_seconds: FRESHNESS_LIMIT_SECONDS,
  };
}

export async function recordDbBackup(db: Queryable, backup: DbBackupRecord, now: Date): Promise<void> {
  await db.insert(dbBackups).values({
    at: new Date(backup.at),
    name: backup.name,
    label: backup.label,
    sizeBytes: backup.size_bytes,
    dir: backup.dir,
    felisVersion: backup.felis_version ?? null,
    schemaVersion: backup.schema_version ?? null,
    recordedAt: now,
  });
}

export async function dbBackupStatus(db: Queryable, now: Date) {
  const [row] = await db.select().from(dbBackups).orderBy(desc(dbBackups.at)).limit(1);
  const last: DbBackupRecord | null = row
    ? {
        at: row.at.toISOString(),
        name: row.name,
        label: row.label,
        size_bytes: row.sizeBytes,
        dir: row.dir,
        ...(row.felisVersion === null ? {} : { felis_version: row.felisVersion }),
        ...(row.schemaVersion === null ? {} : { schema_version: row.schemaVersion }),
      }
    : null;
  return { last, stale: isStale(row?.at, now), max_age_seconds: FRESHNESS_LIMIT_SECONDS };
}

/** When the newest database backup and the newest update report were recorded, for the fleet's figures. */
export async function newestRecords(db: Queryable): Promise<{ databaseBackup: Date | undefined; updateReport: Date | undefined }> {
  const [dbBackup, report] = await Promise.all([db.select({ at: max(dbBackups.at) }).from(dbBackups), db.select({ at: max(updateReports.checkedAt) }).from(updateReports)]);
  return {
    databaseBackup: dbBackup[0]?.at ? new Date(dbBackup[0].at) : undefined,
    updateReport: report[0]?.at ? new Date(report[0].at) : undefined,
  };
}
