import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

// The auth feature's tables (src/features/auth): only it reads and writes them.

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Owner tokens (hashed); at most one is live. Without `owner_id`, a first-run token that creates
 * the owner; with it, a recovery token (`npm run recover-owner`) that signs in as that owner.
 */
export const setupTokens = pgTable('setup_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  createdAt: at('created_at').notNull(),
  expiresAt: at('expires_at').notNull(),
  usedAt: at('used_at'),
  ownerId: uuid('owner_id').references(() => users.id, { onDelete: 'cascade' }),
});
