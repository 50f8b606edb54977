import { index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export type OpLoginStatus = 'pending' | 'approved' | 'consumed';

/**
 * Operator-login requests: a staff member's mailed code (hashed, with its attempt count) waiting
 * for an in-game approval. Every move (approve, spend) is one conditional update on `status`.
 */
export const opLoginRequests = pgTable(
  'op_login_requests',
  {
    /** 32 lowercase hex characters: typed in game, polled by the browser. */
    id: text('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    clientIp: text('client_ip').notNull().default(''),
    userAgent: text('user_agent').notNull().default(''),
    status: text('status').$type<OpLoginStatus>().notNull(),
    codeHash: text('code_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    approvedBy: uuid('approved_by'),
    approvedAt: at('approved_at'),
    consumedAt: at('consumed_at'),
  },
  (t) => [index('op_login_requests_status_idx').on(t.status, t.createdAt), index('op_login_requests_user_idx').on(t.userId, t.createdAt)],
);
