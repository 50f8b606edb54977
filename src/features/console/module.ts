import { closingTask } from '../../coordination/index.js';
import type { Deps, FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import { LogHubs, type ConsoleParts } from './log-hub.js';
import { consoleRoutes } from './routes.js';
import { consoleStreamRoutes } from './stream-route.js';

/** Makes the console's log hubs, once per service (`given` replaces them: tests and benches). */
export function createConsoleParts(infrastructure: Pick<Deps, 'cluster' | 'clock' | 'log'>, given: Partial<ConsoleParts> = {}): ConsoleParts {
  return { consoleLogs: given.consoleLogs ?? new LogHubs({ cluster: infrastructure.cluster, clock: infrastructure.clock, log: infrastructure.log }) };
}

/**
 * The console module: its log hubs (`ConsoleParts`), the command and access routes and the log
 * stream, and the closing of the hubs' followed pod logs (each hub starts with its first viewer).
 */
export function createConsole(infrastructure: AppDeps, own: ConsoleParts, apis: ServersParts): FeatureModule<ConsoleParts> {
  const deps = { ...infrastructure, ...own, ...apis };
  return {
    name: 'console',
    api: own,
    routes: { external: [consoleRoutes(deps), consoleStreamRoutes(deps)] },
    tasks: [closingTask('console log hubs', () => own.consoleLogs.close())],
  };
}
