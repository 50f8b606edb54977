import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import { fleetFiguresTask } from './figures.js';
import type { FleetParts } from './metrics.js';
import { usageRoutes } from './routes.js';
import { serverEventsTask } from './server-events.js';
import { usageSamplingTask } from './usage.js';

/**
 * The fleet module: its game-level collectors and figures (`FleetParts`, made by the composition
 * root with the metrics registry), the usage routes, and the figures, server-events and usage
 * sampling rounds.
 */
export function createFleet(infrastructure: AppDeps, own: FleetParts, apis: ServersParts): FeatureModule<FleetParts> {
  const deps = { ...infrastructure, ...own, ...apis };
  return {
    name: 'fleet',
    api: own,
    routes: { external: [usageRoutes(deps)] },
    tasks: [fleetFiguresTask(deps, deps.replica, deps.fleetMetrics), serverEventsTask(deps), usageSamplingTask(deps, deps.replica)],
  };
}
