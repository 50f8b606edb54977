import { bigint, boolean, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** WebAuthn credentials bound to an account. The public key is stored, never returned. */
export const passkeyCredentials = pgTable(
  'passkey_credentials',
  {
    /** Opaque row id: the id the unbind route takes. */
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The authenticator's credential id, base64url; bound to at most one account. */
    credentialId: text('credential_id').notNull(),
    /** COSE public key, base64url. */
    publicKey: text('public_key').notNull(),
    /** Signature counter (uint32; 0 for authenticators that keep none). */
    counter: bigint('counter', { mode: 'number' }).notNull(),
    transports: text('transports').array().notNull(),
    deviceType: text('device_type').$type<'singleDevice' | 'multiDevice'>().notNull(),
    backedUp: boolean('backed_up').notNull(),
    /** Authenticator model; null when the authenticator did not say (the all-zero AAGUID). */
    aaguid: text('aaguid'),
    name: text('name').notNull().default(''),
    createdAt: at('created_at').notNull(),
    lastUsedAt: at('last_used_at'),
  },
  (t) => [
    uniqueIndex('passkey_credentials_credential_id_key').on(t.credentialId),
    index('passkey_credentials_user_idx').on(t.userId, t.createdAt),
  ],
);

export type PasskeyPurpose = 'register' | 'login' | 'discoverable' | 'reauth';

/**
 * Live WebAuthn ceremonies (begin → finish), single use: finish deletes the row before it verifies
 * anything. `subject` says whose ceremony it is: the account (register), the session (reauth), or
 * the sha-256 of the login id handed to the browser (discoverable); email-first logins are found by
 * their challenge so that a begin by someone else never cancels the owner's.
 */
export const passkeyCeremonies = pgTable(
  'passkey_ceremonies',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    purpose: text('purpose').$type<PasskeyPurpose>().notNull(),
    subject: text('subject').notNull(),
    /** The challenge the authenticator must sign, base64url. */
    challenge: text('challenge').notNull(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    /** The begin's network (IPv4 host or IPv6 /48), for the per-network cap of public begins. */
    network: text('network'),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('passkey_ceremonies_subject_key').on(t.purpose, t.subject, t.challenge),
    index('passkey_ceremonies_network_idx').on(t.purpose, t.network, t.expiresAt),
    index('passkey_ceremonies_expiry_idx').on(t.expiresAt),
  ],
);
