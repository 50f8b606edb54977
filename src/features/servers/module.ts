import { closingTask } from '../../coordination/index.js';
import type { Deps, FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { sessionChangeFeed } from '../accounts/index.js';
import { AccessChanges, ServerCache, type ServersParts } from './core/index.js';
import { externalServerRoutes } from './external-routes.js';
import { internalServerRoutes } from './internal-routes.js';
import { opsServerRoutes } from './ops-routes.js';
import { restartsOnStopTask, restartsTask } from './power.js';
import type { ServerRowsElsewhere } from './forget.js';
import { retirementSweepTask } from './retirement-sweep.js';

/**
 * Makes the servers feature's objects, once per service: the cache of the cluster's servers (its
 * watch starts on the first read: `startServersFeature` fills it before the service listens) and
 * the access changes (told across replicas by the session change feed, when there is one).
 * `given` replaces either (tests and benches hand their own). The node guard is not made here:
 * nodes, above servers, hands it in (src/service.ts).
 */
export function createServersParts(infrastructure: Pick<Deps, 'cluster' | 'config' | 'database'>, given: Partial<ServersParts> = {}): Omit<ServersParts, 'nodeGuard'> {
  return {
    serverCache: given.serverCache ?? new ServerCache(infrastructure.cluster, infrastructure.config.rootDomain),
    // Another replica's member removal reaches this one's open console streams through the change feed.
    accessChanges: given.accessChanges ?? new AccessChanges(sessionChangeFeed(infrastructure)),
  };
}

/**
 * The servers module: its cache and access changes (`ServersParts`, made by `createServersParts`),
 * its routes on both faces, the retirement sweep and restart rounds, the restarts' step on a
 * server's stop (`restartsOnStopTask`, on every replica), and the closing of its cache's
 * watch and of the access changes' subscription (first of its tasks, so the last of them to stop).
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
    tasks: [
      closingTask('server cache', () => {
        own.serverCache.close();
        own.accessChanges?.close();
      }),
      retirementSweepTask(deps, deps.replica, above.alsoForget),
      restartsTask(deps, deps.replica),
      restartsOnStopTask(deps),
    ],
  };
}
