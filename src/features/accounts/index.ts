/**
 * The front door of the accounts feature, the core the other identity features stand on: users
 * and their roles, sessions and their cookie, the session check, one-time codes by e-mail, the
 * reauth guard of a session, and the account's own and the staff's routes over them.
 */
export { createSessionAuthenticator, SignedInAccounts } from './authenticator.js';
export { adminAccountRoutes } from './admin-routes.js';
export { createUserAsOperator, listUsers } from './admin-service.js';
export { displayIdentities, findLiveUserByName, findUserByMcUuid, getQuota, identitiesOf, linkedTo, roleOf, usernameOf, usernameOfActor } from './directory.js';
export { CODE_MAX_ATTEMPTS, CODE_TTL_MS, checkCode, codeHeld, codeHold, codeMatches, codeRefused, generateCode, invalidCode, resendWait } from './codes/index.js';
export { isConsoleHost, signInClient, type SignInClient } from './sessions/index.js';
export { giveBucketTokenBack, takeBucketToken, type BucketVerdict } from './rate-buckets.js';
export { hasLink, insertLink, linkOf } from './links.js';
export { HOUSEKEEPING_INTERVAL_MS, accountHousekeepingTask } from './housekeeping.js';
export { mailCode, requireMail, sendCode } from './codes/index.js';
export { withPasswordChangeGate } from './sessions/index.js';
export { proofStanding, recordProof, requireReauth } from './sessions/index.js';
export { isStaffRole, signInRole } from './roles.js';
export { accountRoutes } from './routes.js';
export { EmailSchema, McUuidSchema, RoleSchema, SignInRoleSchema, UsernameSchema } from './schema.js';
export { clearSessionCookie, deviceToken, sessionToken, setDeviceCookie, setSessionCookie } from './sessions/index.js';
export { USER_AGENT_MAX_BYTES, cutUtf8, knownClient, mintSession, revokeSession, revokeUserSessions } from './sessions/index.js';
export { findLiveUserByEmail, findLiveUserByUsername, findUserById, insertUser, insertUserUnlessTaken, liveOwners, lockUser, markEmailVerified, setInSetup, setPasswordHash, uniqueViolation, type UserRow } from './users.js';
export type { AccountsParts, PasskeyDirectory } from './parts.js';
export { createAccounts, createAccountsParts, sessionChangeFeed, type AccountsMade } from './module.js';
