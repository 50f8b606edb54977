import { closingTask } from '../../coordination/index.js';
import type { Deps, FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { verifierRoutes } from './routes.js';
import { createSessionVerifier, type VerifierParts } from './service.js';

/** Makes the hasJoined verifier, once per service (`given` replaces it: tests and benches). */
export function createVerifierParts(
  infrastructure: Pick<Deps, 'config' | 'clock' | 'metrics' | 'log' | 'database'>,
  given: Partial<VerifierParts> = {},
): VerifierParts {
  return { sessionVerifier: given.sessionVerifier ?? createSessionVerifier(infrastructure) };
}

/**
 * The verifier module: the hasJoined verifier (`VerifierParts`), the proxy's verify routes, and
 * the closing of the verifier's keep-alive clients to the session sources.
 */
export function createVerifier(infrastructure: AppDeps, own: VerifierParts): FeatureModule<VerifierParts> {
  return {
    name: 'verifier',
    api: own,
    routes: { internal: [verifierRoutes({ ...infrastructure, ...own })] },
    tasks: [closingTask('session verifier', () => own.sessionVerifier.close())],
  };
}
