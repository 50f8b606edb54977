import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { VerifierParts } from '../verifier/index.js';
import { reclaimRoutes } from './routes.js';

/** The reclaim module: the ops face's reclaim of a player's name. */
export function createReclaim(infrastructure: AppDeps, apis: VerifierParts): FeatureModule {
  return { name: 'reclaim', api: {}, routes: { internal: [reclaimRoutes({ ...infrastructure, ...apis })] }, tasks: [] };
}
