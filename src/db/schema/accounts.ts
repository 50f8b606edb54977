import { sql } from 'drizzle-orm';
import {
  boolean,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export type UserRole = 'owner' | 'admin' | 'user';

/** Web accounts. Soft-deleted rows keep their id (audit, ownership history) but free their e-mail. */
export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    username: text('username').notNull(),
    email: text('email'),
    emailVerified: boolean('email_verified').notNull().default(false),
    role: text('role').$type<UserRole>().notNull().default('user'),
    disabled: boolean('disabled').notNull().default(false),
    deletedAt: at('deleted_at'),
    passwordHash: text('password_hash'),
    mustChangePassword: boolean('must_change_password').notNull().default(false),
    /** First-run setup lockdown: only setup-allowed operations until a durable way in exists. */
    inSetup: boolean('in_setup').notNull().default(false),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('users_username_key').on(sql`lower(${t.username})`),
    uniqueIndex('users_email_live_key').on(sql`lower(${t.email})`).where(sql`${t.deletedAt} is null`),
  ],
);

/** Per-user limits; a missing row or a null column means unlimited. */
export const userQuotas = pgTable('user_quotas', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  maxServers: integer('max_servers'),
  maxCpuMilli: integer('max_cpu_milli'),
  maxMemoryMb: integer('max_memory_mb'),
  maxStorageGb: integer('max_storage_gb'),
});

/** In-game identities (verified player UUIDs) linked to a web account. */
export const linkedAccounts = pgTable(
  'linked_accounts',
  {
    mcUuid: uuid('mc_uuid').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    authSource: text('auth_source').$type<'primary' | 'thirdparty'>().notNull(),
    verifiedAt: at('verified_at').notNull(),
  },
  (t) => [index('linked_accounts_user_idx').on(t.userId)],
);

export type SignInMethod = 'password' | 'email_otp' | 'setup_token' | 'passkey' | 'bind' | 'operator_login';

/** Browser sessions: only the sha-256 of the cookie is kept. */
export const sessions = pgTable(
  'sessions',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The host the session was minted on; it authenticates nowhere else. */
    host: text('host').notNull(),
    method: text('method').$type<SignInMethod>().notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    lastSeenAt: at('last_seen_at').notNull(),
    userAgent: text('user_agent').notNull().default(''),
    clientIp: text('client_ip').notNull().default(''),
    revokedAt: at('revoked_at'),
    /**
     * SHA-256 of the device cookie the browser was given at this password sign-in (the sign-in's
     * lane of known clients, src/features/auth/password-service.ts); null for other sign-ins.
     */
    deviceHash: text('device_hash'),
  },
  (t) => [index('sessions_user_idx').on(t.userId, t.createdAt)],
);

/**
 * The latest reauth proof given in a session (a passkey assertion or an e-mail code on the reauth
 * routes, or a passkey just registered). A sign-in through a proving door counts from the
 * session's own creation time, so it needs no row here.
 */
export const reauthProofs = pgTable('reauth_proofs', {
  sessionHash: text('session_hash')
    .primaryKey()
    .references(() => sessions.tokenHash, { onDelete: 'cascade' }),
  provedAt: at('proved_at').notNull(),
  factor: text('factor').$type<'passkey' | 'email'>().notNull(),
});

export type EmailCodePurpose = 'verify' | 'signin' | 'reauth';

/**
 * E-mail one-time codes, one live code per user and purpose (a new one supersedes the prior).
 * `attempts` is counted before the code is compared, so concurrent guesses cannot pass the lock.
 */
export const emailCodes = pgTable(
  'email_codes',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose').$type<EmailCodePurpose>().notNull(),
    email: text('email').notNull(),
    codeHash: text('code_hash').notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    consumedAt: at('consumed_at'),
  },
  (t) => [primaryKey({ columns: [t.userId, t.purpose] }), index('email_codes_email_idx').on(sql`lower(${t.email})`, t.createdAt)],
);

/** Wrong e-mail codes per account, for the 24-hour door lock. */
export const emailCodeFailures = pgTable(
  'email_code_failures',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    at: at('at').notNull(),
  },
  (t) => [index('email_code_failures_user_idx').on(t.userId, t.at)],
);

/** Token buckets of the public sign-in doors, shared by every replica on the database. */
export const rateLimitBuckets = pgTable('rate_limit_buckets', {
  key: text('key').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  updatedAt: at('updated_at').notNull(),
});

export type ApiKeyScope = 'read' | 'write';

/**
 * API keys (issue 42): a script's way in as its user, sent as `Authorization: Bearer felis_…`.
 * Only the sha-256 of the secret is kept. `window_start`/`window_count` count the key's requests
 * in the current minute, in the database, so that every replica shares one limit.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    secretHash: text('secret_hash').notNull(),
    scopes: text('scopes').array().$type<ApiKeyScope[]>().notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at'),
    revokedAt: at('revoked_at'),
    lastUsedAt: at('last_used_at'),
    windowStart: at('window_start'),
    windowCount: integer('window_count').notNull().default(0),
  },
  (t) => [uniqueIndex('api_keys_secret_hash_key').on(t.secretHash), index('api_keys_user_idx').on(t.userId)],
);
