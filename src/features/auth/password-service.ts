import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { randomToken, sha256Hex } from '../../lib/secrets.js';
import { findLiveUserByUsername, findUserById, knownClient, mintSession, requireReauth, revokeSession, revokeUserSessions, setPasswordHash, type SignInClient } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { refusePlayerOnConsole, requireLocalAuth, type SignedIn } from '../doors/index.js';
import { throttledHashing, type AuthParts } from './hash-limit.js';
import { DUMMY_PASSWORD_HASH, hashPassword, passwordBytes, PASSWORD_MAX_BYTES, PASSWORD_MIN_BYTES, verifyPassword } from './password.js';

const NOBODY = '00000000-0000-0000-0000-000000000000';

/** Local password sign-in. Every failure of the name or the password is the same 401. */
export async function passwordSignIn(
  deps: Pick<Deps, 'config' | 'database' | 'clock' | 'random'> & AuthParts,
  input: { username: string; password: string },
  client: SignInClient,
  /** The session cookie the request carried, if any: a live session of the same account is a known client. */
  sessionToken?: string,
  /** The device cookie the request carried, if any: one given at a sign-in of the same account is a known client. */
  deviceToken?: string,
): Promise<SignedIn & { mustChangePassword: boolean; deviceToken: string }> {
  requireLocalAuth(deps.config);
  const db = deps.database.db;
  const name = input.username.toLowerCase();
  const user = await findLiveUserByUsername(db, name);
  // A known client: the account signed in from this address before, or from this browser (the
  // device cookie given then), or the request carries a live session of the same account. Asked
  // for an unknown name too (of nobody), so that the answer takes the same time.
  const signedInHere = await knownClient(
    db,
    user?.id ?? NOBODY,
    { clientIp: client.clientIp, deviceHash: deviceToken ? sha256Hex(deviceToken) : undefined, sessionHash: sessionToken ? sha256Hex(sessionToken) : undefined },
    deps.clock.now(),
  );
  const known = user !== undefined && signedInHere;
  // Unknown users and users without a password are checked against a dummy hash: same time.
  const matches = await throttledHashing(deps, { account: `name:${name}`, clientIp: client.clientIp, known }, () =>
    verifyPassword(input.password, user?.passwordHash ?? DUMMY_PASSWORD_HASH),
  );
  if (!user || !user.passwordHash || !matches) throw new DomainError('invalid_credentials', 'Wrong username or password.');
  if (user.disabled) throw new DomainError('account_disabled', 'This account is disabled.');
  refusePlayerOnConsole(deps.config, client.host, user.role);
  // A new device token at each sign-in (never the one presented, which the browser's owner may not
  // have chosen); the older ones stay known while their sessions' rows are kept.
  const device = randomToken(deps.random, 32);
  const session = await mintSession(deps, db, { ...client, userId: user.id, method: 'password', deviceHash: sha256Hex(device) });
  return { userId: user.id, role: user.role, token: session.token, mustChangePassword: user.mustChangePassword, deviceToken: device };
}

/** Ends the session of a token, if it is live (signing out is idempotent). */
export async function signOut(deps: Pick<Deps, 'database' | 'clock'>, token: string | undefined): Promise<void> {
  if (token) await revokeSession(deps.database.db, sha256Hex(token), deps.clock.now());
}

/**
 * Changes the local password after checking the current one; every other session of the account
 * is revoked. Guarded by reauth.
 */
export async function changePassword(
  deps: Pick<Deps, 'config' | 'database' | 'clock'> & AuthParts,
  session: SessionContext,
  input: { current: string; next: string; clientIp: string },
  requestId?: string,
): Promise<void> {
  requireLocalAuth(deps.config);
  await requireReauth(deps, session);
  const size = passwordBytes(input.next);
  if (size < PASSWORD_MIN_BYTES || size > PASSWORD_MAX_BYTES) {
    throw new DomainError('bad_request', `The new password must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes.`);
  }
  if (input.next.normalize('NFC') === input.current.normalize('NFC')) {
    throw new DomainError('bad_request', 'The new password must differ from the current one.');
  }
  const user = await findUserById(deps.database.db, session.userId);
  // One gate slot for both runs: the check of the current password and the new hash.
  const hash = await throttledHashing(deps, { account: `user:${session.userId}`, clientIp: input.clientIp }, async () => {
    const matches = await verifyPassword(input.current, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    return user?.passwordHash && matches ? hashPassword(input.next) : undefined;
  });
  if (!user || !hash) throw new DomainError('invalid_credentials', 'The current password is wrong.');
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    await setPasswordHash(tx, user.id, hash, now);
    const revoked = await revokeUserSessions(tx, user.id, now, session.tokenHash);
    await writeAudit(tx, { at: now, actor: user.id, action: 'password.change', target: user.id, detail: { sessions_revoked: revoked }, requestId });
  });
}
