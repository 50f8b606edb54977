import { and, eq, inArray } from 'drizzle-orm';
import { DateTime } from 'luxon';
import { worldBackups, worldExports, worldJobs } from '../../../db/schema/worlds.js';
import type { Deps } from '../../../deps.js';
import { expire, type BackupRow } from './records.js';
import type { WorldsParts } from '../volumes/index.js';

/**
 * Retention of scheduled backups, per server: the newest N, and the newest backup of each of the
 * last N days, ISO weeks and months that have one (UTC calendar), as grandfather-father-son
 * rotations count them. Besides the tiers, two backups are never deleted: the newest verified one
 * (so a rotation can never leave a server with only unverified archives) and any a restore or an
 * export is reading. Manual, `pre_restore` and `inactive_15d` backups are not touched here: they
 * keep their own expiry.
 */

export interface KeepCounts {
  newest: number;
  daily: number;
  weekly: number;
  monthly: number;
}

/** Why a backup is kept, as the backup list shows it (`retention`). */
export const RETENTION_TIERS = ['monthly', 'weekly', 'daily', 'newest', 'newest_verified', 'in_use'] as const;
export type RetentionTier = (typeof RETENTION_TIERS)[number];

export interface RetentionCandidate {
  id: string;
  createdAt: Date;
  verified: boolean;
  corrupt: boolean;
}

const bucketOf = {
  daily: (at: DateTime) => at.toISODate()!,
  weekly: (at: DateTime) => `${at.weekYear}-W${at.weekNumber}`,
  monthly: (at: DateTime) => at.toFormat('yyyy-MM'),
} as const;

/**
 * The kept backups and the tier that keeps each (the longest-lived tier when several do). Pure: the
 * same candidates give the same answer on every replica. `inUse` ids are kept whatever the tiers say.
 */
export function retentionPlan(candidates: readonly RetentionCandidate[], keep: KeepCounts, inUse: ReadonlySet<string> = new Set()): Map<string, RetentionTier> {
  const newestFirst = [...candidates].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1));
  const sound = newestFirst.filter((b) => !b.corrupt);
  const tiers = new Map<string, Set<RetentionTier>>();
  const mark = (id: string, tier: RetentionTier) => (tiers.get(id) ?? tiers.set(id, new Set()).get(id)!).add(tier);

  sound.slice(0, keep.newest).forEach((b) => mark(b.id, 'newest'));
  for (const period of ['daily', 'weekly', 'monthly'] as const) {
    const seen = new Set<string>();
    for (const b of sound) {
      if (seen.size >= keep[period]) break;
      const bucket = bucketOf[period](DateTime.fromJSDate(b.createdAt, { zone: 'utc' }));
      if (seen.has(bucket)) continue;
      seen.add(bucket);
      mark(b.id, period);
    }
  }
  const newestVerified = sound.find((b) => b.verified);
  if (newestVerified && !tiers.has(newestVerified.id)) mark(newestVerified.id, 'newest_verified');
  for (const b of newestFirst) if (inUse.has(b.id) && !tiers.has(b.id)) mark(b.id, 'in_use');

  const plan = new Map<string, RetentionTier>();
  for (const [id, held] of tiers) plan.set(id, RETENTION_TIERS.find((t) => held.has(t))!);
  return plan;
}

/** The backups of `serverName` a running restore or a live export of a backup is reading. */
async function backupsInUse(deps: Pick<Deps, 'database'>, serverName: string, rows: readonly BackupRow[]): Promise<Set<string>> {
  const { db } = deps.database;
  const [restores, exports] = await Promise.all([
    db
      .select({ backupId: worldJobs.backupId })
      .from(worldJobs)
      .where(and(eq(worldJobs.serverName, serverName), eq(worldJobs.kind, 'restore'), eq(worldJobs.state, 'running'))),
    db
      .select({ storageKey: worldExports.storageKey })
      .from(worldExports)
      .where(and(eq(worldExports.serverName, serverName), eq(worldExports.source, 'backup'), inArray(worldExports.state, ['preparing', 'ready']))),
  ]);
  const used = new Set<string>();
  for (const r of restores) if (r.backupId) used.add(r.backupId);
  const keys = new Set(exports.map((e) => e.storageKey));
  for (const row of rows) if (keys.has(row.storageKey)) used.add(row.id);
  return used;
}

/**
 * Applies the retention to a server's present scheduled backups: each kept one records its tier,
 * the others are expired (their archives deleted). Idempotent, so two replicas pruning at once
 * agree. Resolves the ids expired.
 */
export async function pruneScheduledBackups(deps: Pick<Deps & WorldsParts, 'database' | 'worlds' | 'log' | 'config'>, serverName: string): Promise<string[]> {
  const { db } = deps.database;
  const rows = await db
    .select()
    .from(worldBackups)
    .where(and(eq(worldBackups.serverName, serverName), eq(worldBackups.reason, 'scheduled'), eq(worldBackups.status, 'present')));
  const inUse = await backupsInUse(deps, serverName, rows);
  const plan = retentionPlan(
    rows.map((r) => ({ id: r.id, createdAt: r.createdAt, verified: r.verifiedAt !== null, corrupt: r.corrupt })),
    deps.config.backupKeep,
    inUse,
  );
  const expired: string[] = [];
  for (const row of rows) {
    const tier = plan.get(row.id);
    if (tier) {
      if (row.retention !== tier) await db.update(worldBackups).set({ retention: tier }).where(eq(worldBackups.id, row.id));
    } else {
      await expire(deps, row);
      expired.push(row.id);
    }
  }
  if (expired.length) deps.log.info({ server: serverName, expired: expired.length, kept: plan.size }, 'scheduled backups rotated');
  return expired;
}
