import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import type { WorldsParts } from '../worlds/index.js';
import type { NodesParts } from './cache.js';
import { nodeRoutes } from './routes.js';
import { nodeTasksRecovery } from './runner.js';

/** The nodes module: its node cache (`NodesParts`), the node control routes, and the recovery of node tasks. */
export function createNodes(infrastructure: AppDeps, own: NodesParts, apis: ServersParts & WorldsParts): FeatureModule<NodesParts> {
  const deps = { ...infrastructure, ...own, ...apis };
  return { name: 'nodes', api: own, routes: { external: [nodeRoutes(deps)] }, tasks: [nodeTasksRecovery(deps)] };
}
