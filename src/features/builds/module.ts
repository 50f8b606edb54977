import { join } from 'node:path';
import type { Deps, FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { internalBuildRoutes } from './internal-routes.js';
import { buildRoutes } from './routes.js';
import type { BuildsParts } from './runner.js';
import { SimulatedBuildRunner } from './simulated-runner.js';
import { DirectoryContextStore, ObjectContextStore } from './submissions/context-store.js';
import { submissionRoutes } from './submissions/routes.js';
import { clusterBuildTasks } from './tasks.js';

/**
 * Makes the builds feature's objects, once per service. `given` replaces either (tests and
 * benches hand their own; one given as undefined leaves it out, and its routes answer 503).
 */
export function createBuildsParts(infrastructure: Pick<Deps, 'config' | 'cluster' | 'clock' | 'log' | 'staging'>, given: BuildsParts = {}): BuildsParts {
  const { config, cluster, clock, log, staging } = infrastructure;
  return {
    // With a bucket, contexts live in it beside the upload parts (any replica takes any part); on
    // the embedded default in DATA_DIR/contexts.
    contextStore: 'contextStore' in given ? given.contextStore : config.backupS3Bucket ? new ObjectContextStore(staging) : new DirectoryContextStore(join(config.dataDir, 'contexts')),
    // The cluster's build Jobs where it runs them; the simulated cluster builds in-process.
    buildRunner:
      'buildRunner' in given
        ? given.buildRunner
        : (cluster.builds ??
          (cluster.kind === 'simulated' ? new SimulatedBuildRunner({ clock, onError: (err, job) => log.warn({ err, buildId: job.buildId }, 'simulated build job failed') }) : undefined)),
  };
}

/**
 * The builds module: its runner and context store (`BuildsParts`, made by `createBuildsParts`),
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
