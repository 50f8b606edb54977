/**
 * The front door of the verifier feature: what the rest of the service may use of it.
 */
export { verifierRoutes } from './routes.js';
export { createSessionVerifier } from './service.js';
export type { SessionVerifier } from './service.js';
export type { VerifierParts } from './service.js';
export { isLegalUsername, thirdPartyUuid } from './service.js';
export { parseUuid } from './uuid.js';
export { barPlayer, isBarred } from './bar-list.js';
export { createVerifier, createVerifierParts } from './module.js';
