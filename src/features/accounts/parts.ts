import type { Queryable } from '../../db/client.js';
import type { SignedInAccounts } from './authenticator.js';
import type { PasskeyDirectory } from './sessions/index.js';

export type { PasskeyDirectory };

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
