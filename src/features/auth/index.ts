/**
 * The front door of the auth feature: the e-mail code and password doors, sign-out, the password
 * change and the first-run claim of the owner account.
 */
export { authRoutes } from './routes.js';
export { consoleCurl, leaveSetupCommands, redeemCommand } from './next-steps.js';
export { mintOwnerRecoveryToken } from './owner-recovery.js';
export { mintSetupToken, setupOnStart } from './setup-token.js';
export { createAuthParts, type AuthParts } from './hash-limit.js';
export { createAuth } from './module.js';
