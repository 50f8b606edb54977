import { closingTask } from '../../coordination/index.js';
import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import type { WorldsParts } from '../worlds/index.js';
import type { NodesParts } from './cache.js';
import { nodeRoutes } from './routes.js';
import { nodeTasksRecovery } from './runner.js';

/**
 * The nodes module: its node cache (`NodesParts`, made by `createNodesParts`), the node control
 * routes, the recovery of node tasks, and the closing of the cache's watch.
 */
export function createNodes(infrastructure: AppDeps, own: NodesParts, apis: ServersParts & WorldsParts): FeatureModule<NodesParts> {
  const deps = { ...infrastructure, ...own, ...apis };
  return {
    name: 'nodes',
    api: own,
    routes: { external: [nodeRoutes(deps)] },
    tasks: [closingTask('node cache', () => own.nodeCache?.close()), nodeTasksRecovery(deps)],
  };
}
