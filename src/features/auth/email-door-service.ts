import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { checkCode, CODE_TTL_MS, codeHold, findLiveUserByEmail, invalidCode, markEmailVerified, isStaffRole, mintSession, requireMail, sendCode, type SignInClient } from '../accounts/index.js';
import { refusePlayerOnConsole, requireLocalAuth, type SignedIn } from '../doors/index.js';
import { relyingPartyOf, userHasPasskey } from '../passkeys/index.js';
import { settleAtFixedTime } from './fixed-time.js';

/** The sign-in methods of an address, passkey first; none for an unknown or disabled one. */
export async function signInMethods(deps: Pick<Deps, 'config' | 'database' | 'mail'>, email: string): Promise<Array<'passkey' | 'email_otp'>> {
  requireLocalAuth(deps.config);
  const user = await findLiveUserByEmail(deps.database.db, email);
  const methods: Array<'passkey' | 'email_otp'> = [];
  if (user && !user.disabled && relyingPartyOf(deps.config) && (await userHasPasskey(deps.database.db, user.id))) methods.push('passkey');
  // Staff sign in by passkey or operator login, never by an e-mailed code.
  if (user && !user.disabled && !isStaffRole(user.role) && user.emailVerified && deps.mail) methods.push('email_otp');
  return methods;
}

/**
 * Mails a sign-in code; returns when it would expire. Unknown, staff, disabled, locked and
 * cooling-down addresses get the same answer, unsent, at the same moment as a known one whose code
 * went out (EMAIL_DOOR_ANSWER_MS after arrival).
 */
export async function sendSignInCode(
  deps: Pick<Deps, 'config' | 'database' | 'clock' | 'random' | 'mail' | 'log'>,
  typed: string,
  requestId?: string,
): Promise<Date> {
  requireLocalAuth(deps.config);
  requireMail(deps);
  const startedAt = performance.now();
  const email = typed.toLowerCase();
  const db = deps.database.db;
  const now = deps.clock.now();
  const work = (async () => {
    const user = await findLiveUserByEmail(db, email);
    if (!user || user.disabled || isStaffRole(user.role) || (await codeHold(db, user.id, email, now))) return;
    await sendCode(deps, { userId: user.id, purpose: 'signin', email, now, requestId });
  })();
  await settleAtFixedTime(work, startedAt, deps.config.emailDoorAnswerMs, (err) =>
    deps.log.warn({ err, request_id: requestId }, 'sign-in code: mail failed after the answer'),
  );
  return new Date(now.getTime() + CODE_TTL_MS);
}

/** Signs in with a mailed code; typing it back proves the address (one set by staff starts unverified). */
export async function signInWithCode(
  deps: Pick<Deps, 'config' | 'database' | 'clock' | 'random'>,
  input: { email: string; code: string },
  client: SignInClient,
): Promise<SignedIn> {
  requireLocalAuth(deps.config);
  const db = deps.database.db;
  const now = deps.clock.now();
  const user = await findLiveUserByEmail(db, input.email);
  if (!user || user.disabled) throw invalidCode();
  if (isStaffRole(user.role)) throw new DomainError('staff_account', 'Staff sign in by passkey or operator login.');
  refusePlayerOnConsole(deps.config, client.host, user.role);
  const session = await db.transaction(async (tx) => {
    const check = await checkCode(tx, { userId: user.id, purpose: 'signin', code: input.code, now });
    if (!check.ok || check.email.toLowerCase() !== input.email.toLowerCase()) return undefined;
    await markEmailVerified(tx, user.id, now);
    return mintSession(deps, tx, { ...client, userId: user.id, method: 'email_otp' });
  });
  if (!session) throw invalidCode();
  return { userId: user.id, role: user.role, token: session.token };
}
