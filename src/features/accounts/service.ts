import { eq } from 'drizzle-orm';
import { users } from '../../db/schema/accounts.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { writeAudit } from '../audit/index.js';
import type { SignedInAccount } from './authenticator.js';
import { checkCode, codeHeld, codeHold, codeRefused } from './codes/index.js';
import { requireMail, sendCode } from './codes/index.js';
import { recordProof, requireReauth } from './sessions/index.js';
import { isStaffRole, signInRole } from './roles.js';
import { listLiveSessions, revokeSession, revokeUserSessions } from './sessions/index.js';
import { revokeUserApiKeys } from './keys/index.js';
import { findLiveUserByEmail, findUserById, uniqueViolation } from './users.js';
import { toSessionView } from './views.js';

/** The signed-in account's own view of itself, its sessions and its address. */

type AccountDeps = Pick<Deps, 'database' | 'clock'>;

const addressTaken = () => new DomainError('conflict', 'This address belongs to another account.');

/**
 * `/me`: from the account the session check read (`read`), else from a query of its own.
 * `is_admin` and `is_owner` say whether staff pages answer here, as the original computes them
 * (the role, and a request that came through the admin access): on the panel host they are false,
 * so a panel never offers staff pages that would answer 403; `role` still names the role.
 * Synchronous when the session check read the account (every signed-in `/me` on a live session).
 */
export function accountOf(deps: AccountDeps, session: SessionContext, read: SignedInAccount | undefined, staffPagesHere: boolean) {
  if (read) return meOf(read, staffPagesHere);
  return findUserById(deps.database.db, session.userId).then((user) => {
    if (!user) throw new DomainError('unauthorized');
    return meOf(user, staffPagesHere);
  });
}

function meOf(user: SignedInAccount, staffPagesHere: boolean) {
  return {
    user_id: user.id,
    username: user.username,
    // Always present, "" when there is none: the original panel reads it as a string.
    email: user.email ?? '',
    email_verified: user.emailVerified,
    role: signInRole(user.role),
    is_admin: staffPagesHere && isStaffRole(user.role),
    is_owner: staffPagesHere && user.role === 'owner',
    must_change_password: user.mustChangePassword,
    setup_required: user.inSetup,
  };
}

export async function ownSessions(deps: AccountDeps, session: SessionContext) {
  const rows = await listLiveSessions(deps.database.db, session.userId, isStaffRole(session.role), deps.clock.now());
  return rows.map((r) => toSessionView(r, session.tokenHash));
}

/** Revokes one live session of the caller's own; 404 session_not_found when it names none. */
/** Revokes one of the caller's sessions; true when it was the session of this request (signed out). */
export async function revokeOwnSession(deps: AccountDeps, session: SessionContext, tokenHash: string, requestId?: string): Promise<boolean> {
  const now = deps.clock.now();
  const revoked = await deps.database.db.transaction(async (tx) => {
    if (!(await revokeSession(tx, tokenHash, now, session.userId))) return false;
    await writeAudit(tx, { at: now, actor: session, action: 'session.revoke', target: session.userId, detail: { token_hash: tokenHash }, requestId });
    return true;
  });
  if (!revoked) throw new DomainError('session_not_found', 'No such live session of yours.');
  return tokenHash === session.tokenHash;
}

/** Signs out everywhere else; how many sessions were revoked. */
export async function revokeOtherSessions(deps: AccountDeps, session: SessionContext, requestId?: string): Promise<number> {
  const now = deps.clock.now();
  return deps.database.db.transaction(async (tx) => {
    const n = await revokeUserSessions(tx, session.userId, now, session.tokenHash);
    // "Sign out everywhere" ends the account's API keys too (issue 42).
    const keys = await revokeUserApiKeys(tx, session.userId, now);
    await writeAudit(tx, { at: now, actor: session, action: 'session.revoke_others', target: session.userId, detail: { sessions_revoked: n, ...(keys > 0 ? { api_keys_revoked: keys } : {}) }, requestId });
    return n;
  });
}

/** Records an address for the account, unverified until its code is typed back. Guarded by reauth. */
export async function changeEmail(deps: AccountDeps, session: SessionContext, typed: string, requestId?: string): Promise<string> {
  await requireReauth(deps, session);
  const email = typed.toLowerCase();
  const now = deps.clock.now();
  try {
    await deps.database.db.transaction(async (tx) => {
      const user = await findUserById(tx, session.userId);
      if (!user) throw new DomainError('unauthorized');
      if (user.email?.toLowerCase() === email) return;
      await tx.update(users).set({ email, emailVerified: false, updatedAt: now }).where(eq(users.id, session.userId));
      await writeAudit(tx, { at: now, actor: session, action: 'account.email', target: session.userId, detail: { from: user.email, to: email }, requestId });
    });
  } catch (err) {
    if (uniqueViolation(err) !== undefined) throw addressTaken();
    throw err;
  }
  return email;
}

/** Mails a code to an address to verify it; returns when the code expires. Guarded by reauth. */
export async function startEmailVerification(
  deps: Pick<Deps, 'database' | 'clock' | 'random' | 'mail' | 'log'>,
  session: SessionContext,
  typed: string,
  requestId?: string,
): Promise<Date> {
  await requireReauth(deps, session);
  requireMail(deps);
  const email = typed.toLowerCase();
  const db = deps.database.db;
  const now = deps.clock.now();
  const holder = await findLiveUserByEmail(db, email);
  if (holder && holder.id !== session.userId) throw addressTaken();
  const hold = await codeHold(db, session.userId, email, now);
  if (hold) throw codeHeld(hold);
  return sendCode(deps, { userId: session.userId, purpose: 'verify', email, now, requestId });
}

/**
 * The code typed back: the address becomes the account's verified one, which ends first-run setup
 * lockdown (a durable way in) and is a proof of its own (as the original counts it).
 */
export async function verifyEmail(deps: AccountDeps, session: SessionContext, code: string): Promise<string> {
  const now = deps.clock.now();
  try {
    const check = await deps.database.db.transaction(async (tx) => {
      const check = await checkCode(tx, { userId: session.userId, purpose: 'verify', code, now });
      if (!check.ok) return check;
      await tx
        .update(users)
        .set({ email: check.email, emailVerified: true, inSetup: false, updatedAt: now })
        .where(eq(users.id, session.userId));
      await recordProof(tx, session.tokenHash, 'email', now);
      return check;
    });
    if (!check.ok) throw codeRefused(check);
    return check.email;
  } catch (err) {
    if (uniqueViolation(err) !== undefined) throw addressTaken();
    throw err;
  }
}
