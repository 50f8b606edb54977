import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { checkCode, codeHeld, codeHold, codeRefused, findUserById, isStaffRole, proofStanding, recordProof, requireMail, sendCode } from '../accounts/index.js';
import { beginOwnAssertion, finishOwnAssertion, relyingPartyOf, type Assertion, type OwnCeremony } from '../passkeys/index.js';

/**
 * How a session gives the proof that guarded changes need (accounts/sessions/proofs.ts keeps it): a
 * passkey of the account's, or for players a code mailed to their verified address. Staff whose
 * only factor is their address sign out and in again through a proving door.
 */

/** Best first. `sign_in`: sign out and in again through a proving door (staff, whose e-mail code alone is no factor). */
export type ReauthFactor = 'passkey' | 'email' | 'sign_in';

export interface ReauthStatus {
  /** A guarded change would be refused until the session gives a proof. */
  needed: boolean;
  /** When the current proof stops counting; absent without one. */
  until?: string;
  factors: ReauthFactor[];
}

/** Where the session stands, and which factors can give it a proof here. */
export async function reauthStatus(deps: Pick<Deps, 'config' | 'clock' | 'database' | 'mail'>, session: SessionContext): Promise<ReauthStatus> {
  const standing = await proofStanding(deps, session.tokenHash);
  if (!standing) return { needed: true, factors: [] };
  const factors: ReauthFactor[] = [];
  if (standing.hasPasskey && relyingPartyOf(deps.config)) factors.push('passkey');
  if (standing.verifiedEmail && deps.mail) factors.push(isStaffRole(standing.role) ? 'sign_in' : 'email');
  // No factor at all: signing in again is the proof.
  if (!standing.hasPasskey && !standing.verifiedEmail) factors.push('sign_in');
  return { needed: standing.needed, ...(standing.until ? { until: standing.until.toISOString() } : {}), factors };
}

/** A reauth ceremony belongs to the session that began it: the proof goes to that session only. */
const ceremonyOf = (session: SessionContext): OwnCeremony => ({ purpose: 'reauth', subject: session.tokenHash, userId: session.userId });

type ProofDeps = Pick<Deps, 'config' | 'clock' | 'random' | 'database' | 'log'>;

/** Starts a proof with one of the account's passkeys: the request options. */
export async function beginPasskeyProof(deps: ProofDeps, session: SessionContext) {
  return beginOwnAssertion(deps, ceremonyOf(session));
}

/** Gives the proof with the assertion; returns when it stops counting. */
export async function provePasskey(deps: ProofDeps, session: SessionContext, assertion: Assertion, requestId?: string): Promise<Date> {
  await finishOwnAssertion(deps, ceremonyOf(session), assertion, requestId);
  return recordProof(deps.database.db, session.tokenHash, 'passkey', deps.clock.now());
}

/** The e-mail factor is a player's verified address; staff signing in by e-mail also need the game's approval. */
async function emailFactorOf(deps: Pick<Deps, 'database'>, session: SessionContext): Promise<string> {
  if (isStaffRole(session.role)) throw new DomainError('staff_reauth', 'Operators confirm with a passkey or by signing in again.');
  const user = await findUserById(deps.database.db, session.userId);
  if (!user?.email || !user.emailVerified) throw new DomainError('no_step_up_factor', 'There is no verified e-mail address on this account to send a code to.');
  return user.email;
}

/** The reauth answers to a locked code or e-mail door have never carried Retry-After; they stay as they are. */
const withoutRetryAfter = (err: DomainError) => new DomainError(err.code, err.message);

/** Mails a proof code to the player's verified address; returns when it expires. */
export async function sendProofCode(
  deps: Pick<Deps, 'clock' | 'random' | 'database' | 'mail' | 'log'>,
  session: SessionContext,
  requestId?: string,
): Promise<Date> {
  requireMail(deps);
  const email = await emailFactorOf(deps, session);
  const now = deps.clock.now();
  const hold = await codeHold(deps.database.db, session.userId, email, now);
  if (hold) throw hold.reason === 'door_locked' ? withoutRetryAfter(codeHeld(hold)) : codeHeld(hold);
  return sendCode(deps, { userId: session.userId, purpose: 'reauth', email, now, requestId });
}

/** Gives the proof with the mailed code; returns when it stops counting. */
export async function proveEmail(deps: Pick<Deps, 'clock' | 'database'>, session: SessionContext, code: string): Promise<Date> {
  await emailFactorOf(deps, session);
  const check = await checkCode(deps.database.db, { userId: session.userId, purpose: 'reauth', code, now: deps.clock.now() });
  if (!check.ok) throw withoutRetryAfter(codeRefused(check));
  return recordProof(deps.database.db, session.tokenHash, 'email', deps.clock.now());
}
