import type { FeatureModule } from '../../deps.js';
import { externalMigrationRoutes } from './external-routes.js';
import { internalMigrationRoutes } from './internal-routes.js';

/** The migration module: an account's move from the original service, on both faces. */
export function createMigration(): FeatureModule {
  return { name: 'migration', api: {}, routes: { external: [externalMigrationRoutes()], internal: [internalMigrationRoutes()] }, tasks: [] };
}
