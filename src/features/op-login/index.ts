/**
 * The front door of the op-login feature: what the rest of the service may use of it.
 */
export { externalOpLoginRoutes } from './external-routes.js';
export { internalOpLoginRoutes } from './internal-routes.js';
export { purgeOpLoginRequests } from './service.js';
export { createOpLogin, type OpLoginApi } from './module.js';
