import type { AnyColumn, SQL } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import type { SignedInAccounts } from './authenticator.js';

/** What the accounts feature needs of the passkey feature's table (the passkeys feature provides it). */
export interface PasskeyDirectory {
  count(db: Queryable, userId: string): Promise<number>;
  /** Removes every passkey of a user; returns how many. */
  removeAll(db: Queryable, userId: string): Promise<number>;
  /**
   * Whether the user whose id is `userId` (a column of the asking statement) has a passkey: an
   * `exists` condition the accounts feature puts in its own statement (a session's proof
   * standing), so that reading it costs no second query.
   */
  hasAny(userId: AnyColumn): SQL<boolean>;
}

/**
 * What the accounts feature is handed by the features above it (the composition root wires them):
 * it names none of them.
 */
export interface AccountsParts {
  /**
   * How many servers each user owns, for the admin user list; provided by the servers feature.
   * Absent: every count is 0.
   */
  serverCounts?: (db: Queryable, userIds: string[]) => Promise<Map<string, number>>;
  /**
   * Passkeys of accounts, provided by the passkey feature. Absent: nobody has a passkey (setup
   * state reports none, removing them all removes nothing).
   */
  passkeys?: PasskeyDirectory;
  /**
   * The account rows the session checks of the requests under way read (made with the session
   * authenticator). Absent: `/me` reads the account itself.
   */
  signedInAccounts?: SignedInAccounts;
}
