import { boolean, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** The image whitelist: only an enabled image listed here may be the image of a server. */
export const images = pgTable('images', {
  imageRef: text('image_ref').primaryKey(),
  /** `platform` (the default image), `manual` (an admin added it) or `build` (an image build pushed it). */
  source: text('source').notNull(),
  addedBy: text('added_by').notNull(),
  enabled: boolean('enabled').notNull().default(true),
  addedAt: timestamp('added_at', { withTimezone: true, mode: 'date' }).notNull(),
  buildId: text('build_id'),
});
