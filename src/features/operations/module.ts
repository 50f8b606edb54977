import type { FeatureModule } from '../../deps.js';
import { externalOperationsRoutes } from './external-routes.js';
import { internalOperationsRoutes } from './internal-routes.js';

/** The operations module: the update window and report, the database backup, the ops face's routes. */
export function createOperations(): FeatureModule {
  return { name: 'operations', api: {}, routes: { external: [externalOperationsRoutes()], internal: [internalOperationsRoutes()] }, tasks: [] };
}
