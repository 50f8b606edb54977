import type { FeatureModule } from '../../deps.js';
import { reauthRoutes } from './routes.js';

/** The reauth module: the fresh-proof routes (passkey or e-mail code). */
export function createReauth(): FeatureModule {
  return { name: 'reauth', api: {}, routes: { external: [reauthRoutes()] }, tasks: [] };
}
