import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The event streams open now (console, build logs), one row each, so that the per-account cap
 * counts every replica's streams. A row is a lease the stream renews at each access re-check; a
 * replica that dies leaves rows that lapse on their own.
 */
export const eventStreams = pgTable(
  'event_streams',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** `console` or `build_logs`. */
    kind: text('kind').notNull(),
    target: text('target').notNull(),
    openedAt: at('opened_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    /** The replica serving the stream, so that its next life can free the slot at start-up. */
    replica: text('replica'),
  },
  (t) => [index('event_streams_user_idx').on(t.userId, t.expiresAt)],
);
