import type { Deps } from '../deps.js';
import { accountRoutes } from '../features/accounts/account-routes.js';
import { adminAccountRoutes } from '../features/accounts/admin-routes.js';
import { authRoutes } from '../features/auth/routes.js';
import { externalOperationsRoutes } from '../features/operations/external.js';
import { consoleRoutes } from '../features/console/routes.js';
import { consoleStreamRoutes } from '../features/console/stream-route.js';
import { healthRoutes } from '../features/probes/routes.js';
import { imageRoutes } from '../features/images/routes.js';
import { buildRoutes } from '../features/builds/routes.js';
import { submissionRoutes } from '../features/submissions/routes.js';
import { passkeyRoutes } from '../features/passkeys/routes.js';
import { reauthRoutes } from '../features/reauth/routes.js';
import { externalServerRoutes } from '../features/servers/external.js';
import { externalLinkingRoutes } from '../features/linking/external.js';
import { externalOpLoginRoutes } from '../features/op-login/external.js';
import { externalMigrationRoutes } from '../features/migration/external.js';
import { externalWorldRoutes } from '../features/worlds/routes.js';
import { createApp, type FaceApp } from './create-app.js';

/** Routers of the external face; each feature adds its own line. */
export function mountExternalRoutes(app: FaceApp): void {
  app.addRoutes(healthRoutes());
  app.addRoutes(authRoutes());
  app.addRoutes(accountRoutes());
  app.addRoutes(adminAccountRoutes());
  app.addRoutes(externalServerRoutes());
  app.addRoutes(imageRoutes());
  app.addRoutes(externalOperationsRoutes());
  app.addRoutes(buildRoutes());
  app.addRoutes(submissionRoutes());
  app.addRoutes(consoleRoutes());
  app.addRoutes(consoleStreamRoutes());
  app.addRoutes(externalLinkingRoutes());
  app.addRoutes(externalOpLoginRoutes());
  app.addRoutes(externalMigrationRoutes());
  app.addRoutes(passkeyRoutes());
  app.addRoutes(reauthRoutes());
  app.addRoutes(externalWorldRoutes());
}

/** The external face: the browser panel and the operator console. */
export function createExternalApp(deps: Deps): FaceApp {
  const app = createApp('external', deps);
  mountExternalRoutes(app);
  return app;
}
