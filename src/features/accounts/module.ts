import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { adminAccountRoutes } from './admin-routes.js';
import { accountHousekeepingTask } from './housekeeping.js';
import type { AccountsParts } from './parts.js';
import { accountRoutes } from './routes.js';

/**
 * The accounts module: the signed-in account's routes and the staff's account routes, and the
 * housekeeping round. `apis` are what the features above hand it (their server counts and
 * passkeys) and the signed-in rows its session check fills.
 */
export function createAccounts(infrastructure: AppDeps, apis: AccountsParts): FeatureModule {
  const deps = { ...infrastructure, ...apis };
  return {
    name: 'accounts',
    api: {},
    routes: { external: [accountRoutes(deps), adminAccountRoutes(deps)] },
    tasks: [accountHousekeepingTask(deps, deps.replica)],
  };
}
