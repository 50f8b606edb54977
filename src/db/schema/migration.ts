import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** `superseded` and `redeemed` are final; a source with a `redeemed` row is retired. */
export type MigrationState = 'initiated' | 'confirmed' | 'code_issued' | 'redeemed' | 'superseded';

/**
 * Account migrations: a source account hands its servers to a target account. At most one
 * unfinished migration per source (the partial unique index); a new start supersedes it.
 */
export const accountMigrations = pgTable(
  'account_migrations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    sourceUserId: uuid('source_user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    state: text('state').$type<MigrationState>().notNull(),
    createdAt: at('created_at').notNull(),
    /** The step-up: its mailed code (hashed), attempts, and who gave it when. */
    confirmCodeHash: text('confirm_code_hash'),
    confirmCodeExpiresAt: at('confirm_code_expires_at'),
    confirmAttempts: integer('confirm_attempts').notNull().default(0),
    confirmFactor: text('confirm_factor').$type<'email_otp' | 'passkey'>(),
    confirmSession: text('confirm_session'),
    confirmedAt: at('confirmed_at'),
    /** The code naming the target (hashed). */
    targetUserId: uuid('target_user_id').references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash'),
    codeExpiresAt: at('code_expires_at'),
    finishedAt: at('finished_at'),
  },
  (t) => [
    uniqueIndex('account_migrations_live_key')
      .on(t.sourceUserId)
      .where(sql`${t.state} in ('initiated', 'confirmed', 'code_issued')`),
    index('account_migrations_source_idx').on(t.sourceUserId, t.state),
    index('account_migrations_code_idx').on(t.codeHash),
  ],
);
