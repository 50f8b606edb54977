import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import type { VerifierParts } from '../verifier/index.js';
import { internalSettingsRoutes, settingsRoutes } from './routes.js';

/** The settings module: the staff's run-time settings routes, and the proxy's read of them. */
export function createSettings(infrastructure: AppDeps, apis: VerifierParts & ServersParts): FeatureModule {
  const deps = { ...infrastructure, ...apis };
  return { name: 'settings', api: {}, routes: { external: [settingsRoutes(deps)], internal: [internalSettingsRoutes(deps)] }, tasks: [] };
}
