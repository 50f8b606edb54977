import type { Queryable } from '../../../db/client.js';
import { integerSetting } from '../../servers/index.js';

const DAY = 24 * 60 * 60 * 1000;

/** Settings of the worlds feature (the `settings` table), with the defaults of api-extensions. */
export const WORLD_SETTINGS = {
  retentionManualDays: { key: 'backup_retention_manual_days', fallback: 30 },
  retentionPreRestoreDays: { key: 'backup_retention_pre_restore_days', fallback: 7 },
  retentionInactiveDays: { key: 'backup_retention_inactive_15d_days', fallback: 90 },
  /** A backup is read back again once its last good read-back is this old. */
  reverifyAfterDays: { key: 'backup_reverify_after_days', fallback: 7 },
  exportLifetimeHours: { key: 'export_lifetime_hours', fallback: 24 },
  idleReclaimDays: { key: 'idle_reclaim_days', fallback: 15 },
  /** How often the backup pass (expiry, exports, re-verification, idle reclaim) runs. */
  worldsSweepSeconds: { key: 'worlds_sweep_seconds', fallback: 600 },
  /** The same setting the context upload reads: one part size for every upload in parts. */
  partMaxBytes: { key: 'part_max_bytes', fallback: 32 * 1024 * 1024 },
  /** A session untouched this long is dropped with its staged bytes (the original's 6 h). */
  sessionIdleSeconds: { key: 'upload_session_idle_seconds', fallback: 6 * 60 * 60 },
  /** Open sessions per account: each reserves its whole size on the staging disk. */
  sessionsPerUser: { key: 'upload_sessions_per_user', fallback: 4 },
  /**
   * The bytes one account's open sessions may reserve on the staging disk together (issue 30: one
   * session reserved the whole free volume and held it for six hours).
   */
  reservedBytesPerUser: { key: 'upload_reserved_bytes_per_user', fallback: 8 * 1024 * 1024 * 1024 },
  /** A session that has received nothing lets go of its room after this long untouched. */
  emptySessionIdleSeconds: { key: 'upload_empty_session_idle_seconds', fallback: 120 },
  /** The most an unzip may write, summed over its entries' declared sizes (zip bombs). */
  unzipMaxBytes: { key: 'unzip_max_bytes', fallback: 8 * 1024 * 1024 * 1024 },
  /** The most entries an unzip takes, folders included. */
  unzipMaxEntries: { key: 'unzip_max_entries', fallback: 100_000 },
} as const;

export type WorldSetting = keyof typeof WORLD_SETTINGS;

/** A setting in force (an integer of at least 0, else its default). */
export async function worldSetting(db: Queryable, name: WorldSetting): Promise<number> {
  return integerSetting(db, WORLD_SETTINGS[name]);
}

/** A setting of at least 1, else its default (0 would expire every backup at once). */
async function positive(db: Queryable, name: WorldSetting): Promise<number> {
  const value = await worldSetting(db, name);
  return value >= 1 ? value : WORLD_SETTINGS[name].fallback;
}

export interface WorldTimes {
  retentionMs: { manual: number; pre_restore: number; inactive_15d: number };
  reverifyAfterMs: number;
  exportTtlMs: number;
  idleReclaimMs: number;
  sweepMs: number;
}

/** The worlds' lifetimes and intervals in force, in milliseconds. */
export async function readWorldTimes(db: Queryable): Promise<WorldTimes> {
  const [manual, preRestore, inactive, reverify, exportHours, idle, sweep] = await Promise.all([
    positive(db, 'retentionManualDays'),
    positive(db, 'retentionPreRestoreDays'),
    positive(db, 'retentionInactiveDays'),
    positive(db, 'reverifyAfterDays'),
    positive(db, 'exportLifetimeHours'),
    positive(db, 'idleReclaimDays'),
    positive(db, 'worldsSweepSeconds'),
  ]);
  return {
    retentionMs: { manual: manual * DAY, pre_restore: preRestore * DAY, inactive_15d: inactive * DAY },
    reverifyAfterMs: reverify * DAY,
    exportTtlMs: exportHours * 60 * 60 * 1000,
    idleReclaimMs: idle * DAY,
    sweepMs: sweep * 1000,
  };
}
