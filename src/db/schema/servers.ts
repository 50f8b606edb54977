import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
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
    /** False once the owner took the player's wake right away; the row stays so a join does not give it back. */
    canWake: boolean('can_wake').notNull().default(true),
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

/**
 * A retirement asked for by a server's owner or an admin. The background sweep (one replica)
 * stops the server, then releases it (or deletes it when `delete`) and removes the row.
 */
export const serverRetirements = pgTable('server_retirements', {
  serverName: text('server_name').primaryKey(),
  requestedAt: at('requested_at').notNull(),
  requestedBy: uuid('requested_by').notNull(),
  delete: boolean('delete').notNull(),
});

/**
 * The last start of a server by someone who does not own it (the fair share of the node): a player
 * holds at most `wake_share_per_player` such running servers, and an owner's start may stop the
 * oldest of them while the server is still unclaimed. `waker` is a user id, or `mc:<uuid>` for an
 * unlinked player.
 */
export const serverGuestWakes = pgTable(
  'server_guest_wakes',
  {
    serverName: text('server_name').primaryKey(),
    waker: text('waker').notNull(),
    wokenAt: at('woken_at').notNull(),
  },
  (t) => [index('server_guest_wakes_waker_idx').on(t.waker)],
);

/**
 * A restart asked for from the panel or by a schedule: the server is stopped gracefully, then
 * started within the wake rules. At most one is under way per server (the partial unique index);
 * its state moves by conditional UPDATEs, so whichever replica carries it on, it moves once.
 */
export const serverRestarts = pgTable(
  'server_restarts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    serverName: text('server_name').notNull(),
    requestedBy: text('requested_by').notNull(),
    /** stopping → starting → done, or failed from either. */
    state: text('state', { enum: ['stopping', 'starting', 'done', 'failed'] }).notNull(),
    detail: text('detail'),
    requestedAt: at('requested_at').notNull(),
    stepAt: at('step_at').notNull(),
    finishedAt: at('finished_at'),
  },
  (t) => [uniqueIndex('server_restarts_active_idx').on(t.serverName).where(sql`state in ('stopping', 'starting')`)],
);

/**
 * The last explicit stop of a server by its owner or staff (the panel's stop, the emergency stop).
 * A start made on someone's behalf (a scheduled run starting the server again after its backup, a
 * restart's start) is refused when an explicit stop came after it was asked for: the stop is never
 * undone. Written under the capacity lock, where those starts check it (servers/capacity.ts).
 */
export const serverStops = pgTable('server_stops', {
  serverName: text('server_name').primaryKey(),
  stoppedAt: at('stopped_at').notNull(),
  stoppedBy: text('stopped_by').notNull(),
  /** `stop` or `emergency_stop`. */
  kind: text('kind').notNull(),
});

/**
 * A server's members: accounts its owner shares it with, each with its permissions (issue 42).
 * A row counts only while `owner_id` is still the server's owner, so a server handed to another
 * account or released leaves its former owner's members behind without a second write.
 */
export const serverMembers = pgTable(
  'server_members',
  {
    serverName: text('server_name').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The owner who added the member (the row counts only under that owner). */
    ownerId: uuid('owner_id').notNull(),
    permissions: text('permissions').array().notNull(),
    addedAt: at('added_at').notNull(),
    addedBy: uuid('added_by').notNull(),
  },
  (t) => [primaryKey({ columns: [t.serverName, t.userId] }), index('server_members_user_idx').on(t.userId)],
);
