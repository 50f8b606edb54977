import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import type { ConsoleParts } from './log-hub.js';
import { consoleRoutes } from './routes.js';
import { consoleStreamRoutes } from './stream-route.js';

/** The console module: its log hubs (`ConsoleParts`), the command and access routes and the log stream. */
export function createConsole(infrastructure: AppDeps, own: ConsoleParts, apis: ServersParts): FeatureModule<ConsoleParts> {
  const deps = { ...infrastructure, ...own, ...apis };
  return { name: 'console', api: own, routes: { external: [consoleRoutes(deps), consoleStreamRoutes(deps)] }, tasks: [] };
}
