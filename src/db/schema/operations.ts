import { bigint, check, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** The maintenance window for automatic updates: one row, or none when it was never set. */
export const updateWindow = pgTable(
  'update_window',
  {
    id: integer('id').primaryKey().default(1),
    start: at('start'),
    end: at('end'),
    updatedAt: at('updated_at').notNull(),
    updatedBy: text('updated_by'),
  },
  (t) => [check('update_window_single_row', sql`${t.id} = 1`)],
);

/** A component of an update check, as the `ops` caller recorded it (contract: UpdateComponent). */
export interface UpdateComponentRecord {
  name: string;
  state: 'current' | 'available' | 'unknown' | 'unreadable' | 'pinned';
  current?: string;
  latest?: string;
  selector?: string;
  note?: string;
  error?: string;
}

/** Every update check recorded; the newest by `checked_at` is the report. */
export const updateReports = pgTable(
  'update_reports',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    checkedAt: at('checked_at').notNull(),
    felis: text('felis').notNull(),
    components: jsonb('components').$type<UpdateComponentRecord[]>().notNull(),
    recordedAt: at('recorded_at').notNull(),
  },
  (t) => [index('update_reports_checked_at_idx').on(t.checkedAt)],
);

/** Every control-plane database backup recorded; the newest by `at` is the status. */
export const dbBackups = pgTable(
  'db_backups',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    at: at('at').notNull(),
    name: text('name').notNull(),
    label: text('label').$type<'daily' | 'pre-migrate' | 'pre-restore' | 'manual'>().notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    dir: text('dir').notNull(),
    felisVersion: text('felis_version'),
    schemaVersion: integer('schema_version'),
    recordedAt: at('recorded_at').notNull(),
  },
  (t) => [index('db_backups_at_idx').on(t.at)],
);
