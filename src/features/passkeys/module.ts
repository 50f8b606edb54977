import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { passkeyHousekeepingTask } from './housekeeping.js';
import { passkeyRoutes } from './routes.js';

/**
 * The passkeys module: its routes and the housekeeping round of its challenges. (Its directory
 * for accounts, `passkeyDirectory`, is handed to accounts by the composition root.)
 */
export function createPasskeys(infrastructure: AppDeps): FeatureModule {
  return { name: 'passkeys', api: {}, routes: { external: [passkeyRoutes()] }, tasks: [passkeyHousekeepingTask(infrastructure, infrastructure.replica)] };
}
