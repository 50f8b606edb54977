import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import { worldsTasks } from './housekeeping.js';
import { externalWorldRoutes, internalWorldRoutes } from './routes.js';
import type { WorldsParts } from './volumes/index.js';

/** The worlds module: its runtime (`WorldsParts`), its routes on both faces, and its rounds (with the drain of its jobs). */
export function createWorlds(infrastructure: AppDeps, own: WorldsParts, apis: ServersParts): FeatureModule<WorldsParts> {
  const deps = { ...infrastructure, ...own, ...apis };
  return {
    name: 'worlds',
    api: own,
    routes: { external: [externalWorldRoutes(deps)], internal: [internalWorldRoutes(deps)] },
    tasks: worldsTasks(deps, deps.replica),
  };
}
