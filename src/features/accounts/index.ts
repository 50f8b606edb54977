/**
 * The front door of the accounts feature, the core the other identity features stand on: users
 * and their roles, sessions and their cookie, the session check, one-time codes by e-mail, the
 * reauth guard of a session, and the account's own and the staff's routes over them.
 */
export { createSessionAuthenticator, SignedInAccounts } from './authenticator.js';
export { adminAccountRoutes } from './admin-routes.js';
export { createUserAsOperator, listUsers } from './admin-service.js';
export { displayIdentities, findLiveUserByName, findUserByMcUuid, getQuota, identitiesOf } from './directory.js';
export { CODE_MAX_ATTEMPTS, CODE_TTL_MS, checkCode, codeHeld, codeHold, codeMatches, codeRefused, generateCode, invalidCode, resendWait } from './email-codes.js';
export { isConsoleHost, signInClient, type SignInClient } from './hosts.js';
export { HOUSEKEEPING_INTERVAL_MS, accountHousekeepingTask } from './housekeeping.js';
export { mailCode, requireMail, sendCode } from './mail-codes.js';
export { withPasswordChangeGate } from './password-change-gate.js';
export { proofStanding, recordProof, requireReauth } from './proofs.js';
export { isStaffRole, signInRole } from './roles.js';
export { accountRoutes } from './routes.js';
export { EmailSchema, McUuidSchema, RoleSchema, SignInRoleSchema, UsernameSchema } from './schema.js';
export { clearSessionCookie, sessionToken, setSessionCookie } from './session-cookie.js';
export { USER_AGENT_MAX_BYTES, cutUtf8, mintSession, revokeSession, revokeUserSessions } from './session-service.js';
export { findLiveUserByEmail, findUserById, insertUser, insertUserUnlessTaken, liveOwners, lockUser, markEmailVerified, setInSetup, uniqueViolation, type UserRow } from './users.js';
export type { AccountsParts, PasskeyDirectory } from './parts.js';
export { createAccounts } from './module.js';
