import { users } from '../../../db/schema/accounts.js';
import { DomainError } from '../../../lib/errors.js';

/** The account's columns a signed-in request's check reads (by session cookie or by API key). */
export const SIGNED_IN_USER_COLUMNS = {
  userId: users.id,
  role: users.role,
  disabled: users.disabled,
  deletedAt: users.deletedAt,
  inSetup: users.inSetup,
  username: users.username,
  email: users.email,
  emailVerified: users.emailVerified,
  mustChangePassword: users.mustChangePassword,
};

/** The signed-in account as the session or key check read it (for the request it checked). */
export interface SignedInAccount {
  id: string;
  username: string;
  email: string | null;
  emailVerified: boolean;
  role: string;
  mustChangePassword: boolean;
  inSetup: boolean;
}

type SignedInUserRow = Omit<SignedInAccount, 'id'> & { userId: string };

/** What the check of a request keeps of the account row it read (`/me` reads it for free). */
export function signedInAccountOf(row: SignedInUserRow): SignedInAccount {
  return {
    id: row.userId,
    username: row.username,
    email: row.email,
    emailVerified: row.emailVerified,
    role: row.role,
    mustChangePassword: row.mustChangePassword,
    inSetup: row.inSetup,
  };
}

/** An account still in first-run setup reaches only the routes that allow it, by session or by key. */
export function refuseUnfinishedSetup(row: { inSetup: boolean }, setupAllowed: boolean | undefined): void {
  if (row.inSetup && !setupAllowed) throw new DomainError('setup_required', 'Finish first-run setup: add a passkey or verify an e-mail address.');
}
