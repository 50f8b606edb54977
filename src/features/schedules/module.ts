import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { FleetParts } from '../fleet/index.js';
import type { ServersParts } from '../servers/index.js';
import type { WorldsParts } from '../worlds/index.js';
import { schedulesTask } from './engine.js';
import { scheduleRoutes } from './routes.js';

/** The schedules module: the schedule routes and the schedule round (with its restart follower). */
export function createSchedules(infrastructure: AppDeps, apis: ServersParts & WorldsParts & FleetParts): FeatureModule {
  const deps = { ...infrastructure, ...apis };
  return { name: 'schedules', api: {}, routes: { external: [scheduleRoutes(deps)] }, tasks: [schedulesTask(deps, deps.replica)] };
}
