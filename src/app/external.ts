import type { ServiceParts } from './parts.js';
import { accountRoutes, adminAccountRoutes } from '../features/accounts/index.js';
import { authRoutes } from '../features/auth/index.js';
import { externalOperationsRoutes } from '../features/operations/index.js';
import { consoleRoutes, consoleStreamRoutes } from '../features/console/index.js';
import { healthRoutes } from '../features/probes/index.js';
import { imageRoutes } from '../features/images/index.js';
import { buildRoutes, submissionRoutes } from '../features/builds/index.js';
import { passkeyRoutes } from '../features/passkeys/index.js';
import { reauthRoutes } from '../features/reauth/index.js';
import { externalServerRoutes } from '../features/servers/index.js';
import { externalLinkingRoutes, profileLinkRoutes } from '../features/linking/index.js';
import { externalOpLoginRoutes } from '../features/op-login/index.js';
import { externalMigrationRoutes } from '../features/migration/index.js';
import { externalWorldRoutes } from '../features/worlds/index.js';
import { scheduleRoutes } from '../features/schedules/index.js';
import { settingsRoutes } from '../features/settings/index.js';
import { activityRoutes } from '../features/activity/index.js';
import { webhookRoutes } from '../features/notifications/index.js';
import { usageRoutes } from '../features/fleet/index.js';
import { nodeRoutes } from '../features/nodes/index.js';
import { createApp, type FaceApp } from './create-app.js';
import { mountPages } from './web.js';

/** Routers of the external face; each feature adds its own line. */
export function mountExternalRoutes(app: FaceApp, parts: ServiceParts): void {
  app.addRoutes(healthRoutes());
  app.addRoutes(authRoutes(parts));
  app.addRoutes(accountRoutes(parts));
  app.addRoutes(adminAccountRoutes(parts));
  app.addRoutes(externalServerRoutes(parts));
  app.addRoutes(imageRoutes());
  app.addRoutes(externalOperationsRoutes());
  app.addRoutes(buildRoutes(parts));
  app.addRoutes(submissionRoutes(parts));
  app.addRoutes(consoleRoutes(parts));
  app.addRoutes(consoleStreamRoutes(parts));
  app.addRoutes(externalLinkingRoutes());
  app.addRoutes(externalOpLoginRoutes());
  app.addRoutes(externalMigrationRoutes());
  app.addRoutes(passkeyRoutes());
  app.addRoutes(reauthRoutes());
  app.addRoutes(externalWorldRoutes(parts));
  app.addRoutes(scheduleRoutes(parts));
  app.addRoutes(settingsRoutes(parts));
  app.addRoutes(profileLinkRoutes());
  app.addRoutes(activityRoutes(parts));
  app.addRoutes(webhookRoutes());
  app.addRoutes(usageRoutes(parts));
  app.addRoutes(nodeRoutes(parts));
}

/** The external face: the browser panel and the operator console. */
export function createExternalApp(parts: ServiceParts): FaceApp {
  const app = createApp('external', parts);
  mountExternalRoutes(app, parts);
  mountPages(app);
  return app;
}
