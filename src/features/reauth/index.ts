/**
 * The front door of the reauth feature: what the rest of the service may use of it.
 */
export { reauthRoutes } from './routes.js';
export { recordProof, requireReauth } from './service.js';
