import { createRouter } from '../../http/route.js';
import { passkeyAccountRoutes } from './account-routes.js';
import { passkeyLoginRoutes } from './login-routes.js';

/** Passkeys: the public sign-in doors and the account's own credentials. External face. */
export function passkeyRoutes() {
  return createRouter().include(passkeyLoginRoutes()).include(passkeyAccountRoutes());
}
