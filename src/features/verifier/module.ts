import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { verifierRoutes } from './routes.js';
import type { VerifierParts } from './service.js';

/** The verifier module: the hasJoined verifier (`VerifierParts`) and the proxy's verify routes. */
export function createVerifier(infrastructure: AppDeps, own: VerifierParts): FeatureModule<VerifierParts> {
  return { name: 'verifier', api: own, routes: { internal: [verifierRoutes({ ...infrastructure, ...own })] }, tasks: [] };
}
