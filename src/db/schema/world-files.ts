import { bigint, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export interface UploadPart {
  size: number;
  sha256: string;
}

/**
 * An upload of a large file in parts, bound to the account and the server it was begun for. The
 * bytes are staged on this service's disk (`DATA_DIR/uploads/worlds/<id>.part`), never in the row.
 * `busy_until` is a part's (or a commit's) claim; `commit_job` is the world job landing the file,
 * busy while that job runs. A session untouched for the idle lifetime is swept.
 */
export const worldUploadSessions = pgTable(
  'world_upload_sessions',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    serverName: text('server_name').notNull(),
    path: text('path').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    received: bigint('received', { mode: 'number' }).notNull().default(0),
    parts: jsonb('parts').$type<UploadPart[]>().notNull().default([]),
    busyUntil: at('busy_until'),
    commitJob: uuid('commit_job'),
    createdAt: at('created_at').notNull(),
    touchedAt: at('touched_at').notNull(),
  },
  (t) => [index('world_upload_sessions_user_idx').on(t.userId), index('world_upload_sessions_touched_idx').on(t.touchedAt)],
);

/** Why a file op failed, in the original's fields (`code` is one the file routes answer, or an unzip's own). */
export interface FileOpError {
  code: string;
  message: string;
  entry?: string;
  conflicts?: string[];
  conflict_count?: number;
  need?: number;
  avail?: number;
}

/**
 * The details of an upload's commit or an unzip, beside its world job (same id): what it works on,
 * how far it got, and why it failed. The job's row stays the truth for its state and timestamps.
 */
export const worldFileOps = pgTable(
  'world_file_ops',
  {
    id: uuid('id').primaryKey(),
    serverName: text('server_name').notNull(),
    op: text('op', { enum: ['upload', 'unzip'] }).notNull(),
    path: text('path').notNull(),
    done: bigint('done', { mode: 'number' }).notNull().default(0),
    total: bigint('total', { mode: 'number' }).notNull().default(0),
    files: integer('files'),
    bytes: bigint('bytes', { mode: 'number' }),
    error: jsonb('error').$type<FileOpError>(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('world_file_ops_server_idx').on(t.serverName, t.createdAt)],
);
