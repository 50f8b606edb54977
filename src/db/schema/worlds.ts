import { bigint, boolean, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * World archives. `storage_key` names the object in the backup store and never leaves the
 * service. A row is listed while `present`; `corrupt` is set when a read-back does not hash to
 * `sha256`, and such a backup is never restored.
 */
export const worldBackups = pgTable(
  'world_backups',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    serverName: text('server_name').notNull(),
    /** Who owned the world when it was archived; a user sees only backups of worlds they owned. */
    formerOwner: uuid('former_owner').references(() => users.id, { onDelete: 'set null' }),
    reason: text('reason', { enum: ['manual', 'pre_restore', 'inactive_15d', 'scheduled'] }).notNull(),
    /** backing_up → present | failed; present → expired (deleted or past expires_at). */
    status: text('status', { enum: ['backing_up', 'present', 'failed', 'expired'] }).notNull(),
    storageKey: text('storage_key').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull().default(0),
    sha256: text('sha256'),
    skippedEntries: integer('skipped_entries').notNull().default(0),
    corrupt: boolean('corrupt').notNull().default(false),
    verifiedAt: at('verified_at'),
    /** Why a scheduled backup is kept: its retention tier, set by the last pruning. */
    retention: text('retention'),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
  },
  (t) => [index('world_backups_server_idx').on(t.serverName, t.createdAt), index('world_backups_owner_idx').on(t.formerOwner)],
);

/** What runs or ran on a world: backups, restores, unzips, commits of uploads, exports, reclaims. */
export const worldJobs = pgTable(
  'world_jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    serverName: text('server_name').notNull(),
    kind: text('kind', { enum: ['backup', 'restore', 'unzip', 'upload', 'export', 'reclaim'] }).notNull(),
    state: text('state', { enum: ['running', 'succeeded', 'failed'] }).notNull(),
    message: text('message'),
    backupId: uuid('backup_id'),
    requestedBy: text('requested_by'),
    /** The world lock this job runs under (a pre-restore snapshot runs under its restore's). */
    lockHolder: uuid('lock_holder').notNull(),
    startedAt: at('started_at').notNull(),
    finishedAt: at('finished_at'),
  },
  (t) => [index('world_jobs_server_idx').on(t.serverName, t.startedAt)],
);

/**
 * A download a user asked for: a backup's archive, or an archive made of a stopped world (or a part
 * of it). Only `requested_by` may read or download it; the object is ours (`storage_key`).
 */
export const worldExports = pgTable(
  'world_exports',
  {
    ticket: uuid('ticket').primaryKey(),
    serverName: text('server_name').notNull(),
    requestedBy: uuid('requested_by')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** backup: the backup's own archive (never deleted with the export); world: made for it. */
    source: text('source', { enum: ['backup', 'world'] }).notNull(),
    /** `spent` once downloaded (a ticket is good for one download); `preparing` is the old spelling of `pending`. */
    state: text('state', { enum: ['pending', 'preparing', 'ready', 'failed', 'expired', 'spent'] }).notNull(),
    message: text('message'),
    storageKey: text('storage_key').notNull(),
    filename: text('filename').notNull(),
    contentType: text('content_type').notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
  },
  (t) => [index('world_exports_user_idx').on(t.requestedBy)],
);
