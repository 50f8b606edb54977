/**
 * The front door of the migration feature: what the rest of the service may use of it.
 */
export { externalMigrationRoutes } from './external-routes.js';
export { internalMigrationRoutes } from './internal-routes.js';
export { createMigration } from './module.js';
