import type { AppDeps } from '../../http/env.js';
import { createRouter } from '../../http/route.js';
import type { AccountsParts } from '../accounts/index.js';
import { emailDoorRoutes } from './email-door-routes.js';
import type { AuthParts } from './hash-limit.js';
import { passwordRoutes } from './password-routes.js';
import { setupRoutes } from './setup-routes.js';

/** The public sign-in doors, logout, password change and first-run claim. External face. */
export function authRoutes(deps: AppDeps & AccountsParts & AuthParts) {
  return createRouter().include(emailDoorRoutes()).include(passwordRoutes(deps)).include(setupRoutes(deps));
}
