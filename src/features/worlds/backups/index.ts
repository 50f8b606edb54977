/**
 * The front door of world backups: taking one, restoring one, listing and expiring them, and the
 * background work on them (expiry, re-verification).
 */
export { createBackupRow, recordArchiveOutcome, reverifyBackups, sweepExpiredBackups } from './records.js';
export type { BackupRow } from './records.js';
export { externalBackupRoutes, internalBackupRoutes } from './routes.js';
export { readableBackup, settleBackup, settleRestore, startBackup } from './service.js';
export { pruneScheduledBackups, retentionPlan, RETENTION_TIERS, type KeepCounts, type RetentionTier } from './retention.js';
export { archiveForMove, releaseForMove, restoreForMove } from './move.js';
