/**
 * The front door of the linking feature: what the rest of the service may use of it.
 */
export { LINK_CODE_TTL_MS, generateLinkCode, normalizeLinkCode } from './codes.js';
export { externalLinkingRoutes } from './external-routes.js';
export { identityHousekeepingTask, type CodePurge } from './housekeeping.js';
export { internalLinkingRoutes } from './internal-routes.js';
export { CodeBody, DateTime, McUuidParam, OpaqueId, PrintableText } from './schema.js';
export { profileLinkRoutes } from './profile-routes.js';
export { createLinking } from './module.js';
