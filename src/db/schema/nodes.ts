import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * Node-control tasks (src/features/nodes): approve, cordon, drain, return, remove. Rows, not
 * memory, so that any replica can settle a task whose replica died; at most one runs at a time
 * (the partial unique index is the one-at-a-time rule, so two replicas starting at once cannot
 * both succeed).
 */
export const nodeTasks = pgTable(
  'node_tasks',
  {
    id: text('id').primaryKey(),
    action: text('action').notNull(),
    node: text('node').notNull(),
    /** The request as the client sent it (the original's `request`), retried as is. */
    request: jsonb('request').notNull(),
    actor: text('actor').notNull(),
    /** running, succeeded, failed */
    state: text('state').notNull(),
    stage: text('stage').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    error: text('error'),
    /** The task's own lines (`[felis] stage`, what it stopped), bounded. */
    log: text('log').notNull().default(''),
  },
  (t) => [
    uniqueIndex('node_tasks_one_running').on(t.state).where(sql`${t.state} = 'running'`),
    index('node_tasks_node_started').on(t.node, t.startedAt),
  ],
);

/**
 * Moves of a server's world to another node (GET/POST /servers/{name}/migrations), step by step:
 * `stage` is the step reached, `state` running/succeeded/failed, `switched` whether the placement
 * has moved (the one step that commits the move). At most one unfinished move a server.
 */
export const serverMoves = pgTable(
  'server_moves',
  {
    id: text('id').primaryKey(),
    server: text('server').notNull(),
    state: text('state').notNull(),
    stage: text('stage').notNull(),
    sourceNode: text('source_node').notNull(),
    targetNode: text('target_node').notNull(),
    switched: boolean('switched').notNull().default(false),
    attempt: integer('attempt').notNull().default(0),
    actor: text('actor').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
    error: text('error'),
    /** Node-local volumes: the claim the world was on when the attempt began (released after the switch). */
    sourceVolume: text('source_volume'),
    /** Node-local volumes: the claim made for the world on the target node. */
    targetVolume: text('target_volume'),
    /** Node-local volumes: the verified archive of this attempt (a world_backups row, reason pre_restore). */
    backupId: text('backup_id'),
  },
  (t) => [uniqueIndex('server_moves_one_open').on(t.server).where(sql`${t.state} <> 'succeeded'`), index('server_moves_server_started').on(t.server, t.startedAt)],
);
