import { index, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Who claimed which server. The primary key decides a claim race: of concurrent claims exactly one
 * insert wins. The resources are copied from the spec at claim time so that quota sums stay in SQL.
 */
export const serverClaims = pgTable(
  'server_claims',
  {
    serverName: text('server_name').primaryKey(),
    /** Kept so that the owner's list can name it while the cluster cannot be reached. */
    subdomain: text('subdomain').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    claimedAt: at('claimed_at').notNull(),
    cpuMilli: integer('cpu_milli').notNull().default(0),
    memoryMb: integer('memory_mb').notNull().default(0),
    storageGb: integer('storage_gb').notNull().default(0),
  },
  (t) => [index('server_claims_user_idx').on(t.userId)],
);

/** The last accepted wake per server: the cooldown is counted here so that replicas share it. */
export const serverWakes = pgTable('server_wakes', {
  serverName: text('server_name').primaryKey(),
  lastWakeAt: at('last_wake_at').notNull(),
});

/** Activity the proxy reports: readiness callback and joins (the idle timer restarts from the later). */
export const serverActivity = pgTable('server_activity', {
  serverName: text('server_name').primaryKey(),
  readyAt: at('ready_at'),
  lastJoinAt: at('last_join_at'),
  lastJoinUuid: uuid('last_join_uuid'),
});

/** Players (by UUID) who may wake a server whose autostart policy is `allowlist`, besides its owner. */
export const serverWakeAllowlist = pgTable(
  'server_wake_allowlist',
  {
    serverName: text('server_name').notNull(),
    mcUuid: uuid('mc_uuid').notNull(),
    addedAt: at('added_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.serverName, t.mcUuid] })],
);

/**
 * A hold on a server's world volume (restore, backup, file write). While a row exists the server is
 * not woken (409 maintenance_in_progress); the holder deletes it when done.
 */
export const serverMaintenance = pgTable('server_maintenance', {
  serverName: text('server_name').primaryKey(),
  reason: text('reason').notNull(),
  since: at('since').notNull(),
});
