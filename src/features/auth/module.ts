import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { AccountsParts } from '../accounts/index.js';
import type { AuthParts } from './hash-limit.js';
import { authRoutes } from './routes.js';

/** The auth module: sign-in, sign-out, setup and password routes, with its password-hash gate (`AuthParts`). */
export function createAuth(infrastructure: AppDeps, own: AuthParts, apis: AccountsParts): FeatureModule<AuthParts> {
  return { name: 'auth', api: own, routes: { external: [authRoutes({ ...infrastructure, ...own, ...apis })] }, tasks: [] };
}
