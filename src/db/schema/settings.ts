import { integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Runtime settings that operators change without a restart (platform image, caps, scan policy). */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: jsonb('value').$type<unknown>().notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  /** Bumped by every write: the staff pages' optimistic concurrency (a PUT naming an older one is 409). */
  revision: integer('revision').notNull().default(0),
});
