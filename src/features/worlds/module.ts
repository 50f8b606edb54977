import type { Deps, FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import { worldsTasks } from './housekeeping.js';
import { externalWorldRoutes, internalWorldRoutes } from './routes.js';
import { createWorldsRuntime, type WorldsParts } from './volumes/index.js';

/**
 * Makes the worlds runtime, once per service: the backup store, the world folders (or the cluster's
 * world Jobs) and this process's jobs (`given` replaces it: tests and benches).
 */
export function createWorldsParts(infrastructure: Pick<Deps, 'config' | 'cluster' | 'log' | 'clock' | 'shutdown'>, given: Partial<WorldsParts> = {}): WorldsParts {
  const { config, cluster, log, clock, shutdown } = infrastructure;
  return { worlds: given.worlds ?? createWorldsRuntime(config, cluster, { log, signal: shutdown, clock }) };
}

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
