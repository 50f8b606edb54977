/**
 * The front door of the reclaim feature: what the rest of the service may use of it.
 */
export { reclaimRoutes } from './routes.js';
export { createReclaim } from './module.js';
