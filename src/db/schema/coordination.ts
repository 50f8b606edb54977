import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Who holds what across replicas (src/coordination/leases.ts): one row per lease, taken when free or
 * when its `lease_until` has passed, renewed by a living holder, deleted on release. A world's lock
 * (`world:<server>`), a background loop's round (`loop:<name>`) and the controller's leadership
 * (`leader:<name>`) are all leases; `purpose` says what the holder does (a lock's kind).
 */
export const leases = pgTable('leases', {
  key: text('key').primaryKey(),
  holder: text('holder').notNull(),
  purpose: text('purpose').notNull(),
  acquiredAt: timestamp('acquired_at', { withTimezone: true, mode: 'date' }).notNull(),
  leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }).notNull(),
  /**
   * The replica (process) that took it when the holder is not the replica itself (a world lock
   * held for a job or a file write), so that its next life can release it at start-up.
   */
  replica: text('replica'),
});
