/**
 * The front door of the auth feature: what the rest of the service may use of it.
 */
export { addressKey } from './address.js';
export { refusePlayerOnConsole, requireLocalAuth } from './guards.js';
export { doorLimit } from './rate-limit.js';
export { authRoutes } from './routes.js';
export { SignedInSchema, limited } from './schema.js';
export { setupOnStart } from './setup-token.js';
