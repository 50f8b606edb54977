import type { Queryable } from '../../db/client.js';
import { integerSetting } from '../servers/index.js';

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
} as const;

/** A setting of at least 1, else its default (0 would expire every backup at once). */
async function positive(db: Queryable, setting: { key: string; fallback: number }): Promise<number> {
  const value = await integerSetting(db, setting);
  return value >= 1 ? value : setting.fallback;
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
  const s = WORLD_SETTINGS;
  const [manual, preRestore, inactive, reverify, exportHours, idle, sweep] = await Promise.all([
    positive(db, s.retentionManualDays),
    positive(db, s.retentionPreRestoreDays),
    positive(db, s.retentionInactiveDays),
    positive(db, s.reverifyAfterDays),
    positive(db, s.exportLifetimeHours),
    positive(db, s.idleReclaimDays),
    positive(db, s.worldsSweepSeconds),
  ]);
  return {
    retentionMs: { manual: manual * DAY, pre_restore: preRestore * DAY, inactive_15d: inactive * DAY },
    reverifyAfterMs: reverify * DAY,
    exportTtlMs: exportHours * 60 * 60 * 1000,
    idleReclaimMs: idle * DAY,
    sweepMs: sweep * 1000,
  };
}
