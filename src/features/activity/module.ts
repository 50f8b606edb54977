import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import { activityRoutes } from './routes.js';

/** The activity module: the audit list and a server's activity. */
export function createActivity(infrastructure: AppDeps, apis: ServersParts): FeatureModule {
  return { name: 'activity', api: {}, routes: { external: [activityRoutes({ ...infrastructure, ...apis })] }, tasks: [] };
}
