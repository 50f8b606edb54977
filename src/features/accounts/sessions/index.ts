/**
 * The front door of accounts' sessions: minting, revoking and listing them, their cookie, the
 * hosts a sign-in comes through, the password-change gate, and a session's proof (reauth).
 */
export { isConsoleHost, requestHost, signInClient, staffPagesHere, type SignInClient } from './hosts.js';
export { withPasswordChangeGate } from './password-change-gate.js';
export { proofStanding, recordProof, requireReauth, type PasskeyDirectory } from './proofs.js';
export { clearSessionCookie, deviceToken, sessionToken, setDeviceCookie, setSessionCookie } from './session-cookie.js';
export {
  LAST_SEEN_WRITE_MS,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  STAFF_IDLE_MS,
  USER_AGENT_MAX_BYTES,
  cutUtf8,
  knownClient,
  listLiveSessions,
  mintSession,
  revokeSession,
  revokeUserSessions,
  touchSession,
} from './session-service.js';
export { refuseUnfinishedSetup, SIGNED_IN_USER_COLUMNS, type SignedInAccount, signedInAccountOf } from './signed-in.js';
