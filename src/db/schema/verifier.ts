import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The bar list of the session verifier: canonical player UUIDs (a primary id, or the namespaced
 * UUID of a third-party player) that hasJoined never admits. Reclaim fills it (contract: it bars
 * the squatter UUID, never the name, and holds the data 30 days); a row bars for as long as it
 * exists, `hold_expires_at` only dates the data hold.
 */
export const barredPlayers = pgTable('barred_players', {
  mcUuid: uuid('mc_uuid').primaryKey(),
  username: text('username').notNull(),
  barredAt: timestamp('barred_at', { withTimezone: true, mode: 'date' }).notNull(),
  holdExpiresAt: timestamp('hold_expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  dataRef: text('data_ref'),
});
