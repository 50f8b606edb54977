import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Who runs a round of a background loop of the worlds feature (the backup pass), across replicas:
 * one row per loop, taken when `lease_until` has passed and held (renewed) while the round runs, so
 * a round of minutes holds no transaction open.
 */
export const worldRounds = pgTable('world_rounds', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }).notNull(),
});
