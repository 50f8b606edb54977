import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { externalLinkingRoutes } from './external-routes.js';
import { identityHousekeepingTask, type CodePurge } from './housekeeping.js';
import { internalLinkingRoutes } from './internal-routes.js';
import { profileLinkRoutes } from './profile-routes.js';

/**
 * The linking module: the link and bind routes, the profile of a linked player, and the
 * housekeeping round of expired codes, which also runs the purges the features above it hand it
 * (op-login's requests: op-login imports linking, so linking cannot ask it).
 */
export function createLinking(infrastructure: AppDeps, apis: { alsoPurge: readonly CodePurge[] }): FeatureModule {
  return {
    name: 'linking',
    api: {},
    routes: { external: [externalLinkingRoutes(), profileLinkRoutes()], internal: [internalLinkingRoutes()] },
    tasks: [identityHousekeepingTask(infrastructure, infrastructure.replica, apis.alsoPurge)],
  };
}
