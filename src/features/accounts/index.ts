/**
 * The front door of the accounts feature: what the rest of the service may use of it.
 */
export { accountRoutes } from './account-routes.js';
export { adminAccountRoutes } from './admin-routes.js';
export { createSessionAuthenticator, isStaffRole } from './authenticator.js';
export { displayIdentities, findUserByMcUuid, getQuota } from './directory.js';
export { CODE_MAX_ATTEMPTS, CODE_RESEND_COOLDOWN_MS, CODE_TTL_MS, checkCode, dropCode, emailDoorLocked, generateCode, issueCode, resendCooldown } from './email-codes.js';
export { isConsoleHost, requestHost } from './hosts.js';
export { HOUSEKEEPING_INTERVAL_MS, accountHousekeepingTask } from './housekeeping.js';
export { mailCode, requireMail } from './mail-codes.js';
export { withPasswordChangeGate } from './password-change-gate.js';
export { EmailSchema, McUuidSchema, RoleSchema, SignInRoleSchema, UsernameSchema } from './schema.js';
export { SESSION_COOKIE, USER_AGENT_MAX_BYTES, clearSessionCookie, cutUtf8, revokeSession, revokeUserSessions, startSession } from './session-service.js';
export { findLiveUserByEmail, findUserById, uniqueViolation } from './users-service.js';
export { signInRole } from './views.js';
