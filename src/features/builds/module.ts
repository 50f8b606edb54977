import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { internalBuildRoutes } from './internal-routes.js';
import { buildRoutes } from './routes.js';
import type { BuildsParts } from './runner.js';
import { submissionRoutes } from './submissions/routes.js';
import { clusterBuildTasks } from './tasks.js';

/**
 * The builds module: its runner and context store (made by the composition root, `BuildsParts`),
 * the build and submission routes, and the rounds over the cluster's build Jobs where the cluster
 * runs them.
 */
export function createBuilds(infrastructure: AppDeps, own: BuildsParts): FeatureModule<BuildsParts> {
  const deps = { ...infrastructure, ...own };
  const jobs = infrastructure.cluster.builds;
  return {
    name: 'builds',
    api: own,
    routes: { external: [buildRoutes(deps), submissionRoutes(deps)], internal: [internalBuildRoutes(deps)] },
    tasks: jobs ? clusterBuildTasks(deps, jobs) : [],
  };
}
