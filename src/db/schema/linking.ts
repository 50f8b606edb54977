import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One-time link and bind codes minted in game for a verified player UUID. Only the code's sha-256
 * is kept; `used_at` is set by the one conditional update that spends it, so of concurrent
 * redeems exactly one wins.
 */
export const linkCodes = pgTable(
  'link_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    mcUuid: uuid('mc_uuid').notNull(),
    authSource: text('auth_source').$type<'primary' | 'thirdparty'>().notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    usedAt: at('used_at'),
  },
  (t) => [index('link_codes_expires_idx').on(t.expiresAt)],
);
