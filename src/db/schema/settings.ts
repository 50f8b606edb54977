import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Runtime settings that operators change without a restart (platform image, caps, scan policy). */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: jsonb('value').$type<unknown>().notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
});
