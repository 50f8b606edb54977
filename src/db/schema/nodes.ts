import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

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
