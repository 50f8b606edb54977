import { eq, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { reauthProofs, sessions, users, type SignInMethod } from '../../../db/schema/accounts.js';
import type { Deps } from '../../../deps.js';
import type { Role, SessionContext } from '../../../http/session.js';
import { DomainError } from '../../../lib/errors.js';

/**
 * A session's proof that its holder is still at the keyboard: the guard of every change that adds,
 * removes or moves a way into the account. It lives with the sessions because it is one of their
 * facts, like their expiry; the ceremonies that give a proof are the reauth feature's.
 */

/** What the accounts feature needs of the passkey feature's table (the passkeys feature provides it; `AccountsParts.passkeys`). */
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

/** A proof lets the session make guarded changes this long (contract section 8). */
export const REAUTH_WINDOW_MS = 5 * 60 * 1000;

/**
 * Sign-ins that prove a factor (contract section 5, rule 5). A bind code proves only the in-game
 * identity, and a password is not one of the passwordless doors: neither counts.
 */
const PROVING_SIGN_INS: ReadonlySet<SignInMethod> = new Set<SignInMethod>(['passkey', 'email_otp', 'operator_login', 'setup_token']);

export type ProofFactor = 'passkey' | 'email';

export interface ProofStanding {
  role: Role;
  hasPasskey: boolean;
  verifiedEmail: boolean;
  /** A guarded change would be refused until the session gives a proof. */
  needed: boolean;
  /** When the current proof stops counting; absent without one. */
  until?: Date;
}

/**
 * What a proof is read with: the database, the clock, and the passkey feature's directory (absent:
 * nobody has a passkey, as everywhere in accounts). The composition root hands the directory to
 * every route's deps, so the guarded changes of every feature read it.
 */
type ProofDeps = Pick<Deps, 'database' | 'clock'> & { passkeys?: PasskeyDirectory };

/**
 * Where a session stands: whether its account has a way in to guard, and how fresh its proof is.
 * Undefined when the session is gone (it was authenticated a moment ago: nothing proves with it).
 */
export async function proofStanding(deps: ProofDeps, tokenHash: string): Promise<ProofStanding | undefined> {
  const [row] = await deps.database.db
    .select({
      method: sessions.method,
      signedInAt: sessions.createdAt,
      provedAt: reauthProofs.provedAt,
      role: users.role,
      email: users.email,
      emailVerified: users.emailVerified,
      hasPasskey: deps.passkeys ? deps.passkeys.hasAny(users.id) : sql<boolean>`false`,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .leftJoin(reauthProofs, eq(reauthProofs.sessionHash, sessions.tokenHash))
    .where(eq(sessions.tokenHash, tokenHash))
    .limit(1);
  if (!row) return undefined;
  const standing = { role: row.role, hasPasskey: row.hasPasskey, verifiedEmail: row.emailVerified && row.email !== null };
  // With no factor to ask for, a fresh sign-in through whichever door the account has is the
  // proof (issue 43): never "not needed", or a session left open for hours could change anything.
  const noFactor = !standing.hasPasskey && !standing.verifiedEmail;
  const proofs = [row.provedAt, noFactor || PROVING_SIGN_INS.has(row.method) ? row.signedInAt : null].filter((d): d is Date => d !== null);
  const until = Math.max(...proofs.map((d) => d.getTime())) + REAUTH_WINDOW_MS;
  if (proofs.length > 0 && until > deps.clock.now().getTime()) return { ...standing, needed: false, until: new Date(until) };
  return { ...standing, needed: true };
}

/** 403 reauth_required unless the session gave a proof in the last five minutes (a fresh sign-in, for an account with no factor). */
export async function requireReauth(deps: ProofDeps, session: SessionContext): Promise<void> {
  const standing = await proofStanding(deps, session.tokenHash);
  if (!standing || standing.needed) {
    throw new DomainError('reauth_required', 'Confirm it is you first: this change needs a passkey or an e-mail code from the last 5 minutes.');
  }
}

/** Records a proof given in the session; returns when it stops counting. */
export async function recordProof(db: Queryable, sessionHash: string, factor: ProofFactor, now: Date): Promise<Date> {
  await db
    .insert(reauthProofs)
    .values({ sessionHash, provedAt: now, factor })
    .onConflictDoUpdate({ target: reauthProofs.sessionHash, set: { provedAt: now, factor } });
  return new Date(now.getTime() + REAUTH_WINDOW_MS);
}
