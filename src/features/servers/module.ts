import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from './core/index.js';
import { externalServerRoutes } from './external-routes.js';
import { internalServerRoutes } from './internal-routes.js';
import { opsServerRoutes } from './ops-routes.js';
import { restartsTask } from './power.js';
import type { ServerRowsElsewhere } from './forget.js';
import { retirementSweepTask } from './retirement-sweep.js';

/**
 * The servers module: its cache and access changes (`ServersParts`, made by the composition root
 * with the cluster), its routes on both faces, and the retirement sweep and restart rounds.
 */
export function createServers(
  infrastructure: AppDeps,
  own: ServersParts,
  /** What the features above servers hold of a server, removed when the retirement sweep carries it out. */
  above: { alsoForget: readonly ServerRowsElsewhere[] } = { alsoForget: [] },
): FeatureModule<ServersParts> {
  const deps = { ...infrastructure, ...own };
  return {
    name: 'servers',
    api: own,
    routes: { external: [externalServerRoutes(deps)], internal: [internalServerRoutes(deps), opsServerRoutes(deps)] },
    tasks: [retirementSweepTask(deps, deps.replica, above.alsoForget), restartsTask(deps, deps.replica)],
  };
}
