import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Deps } from '../deps.js';
import { accountRoutes } from '../features/accounts/account-routes.js';
import { adminAccountRoutes } from '../features/accounts/admin-routes.js';
import { authRoutes } from '../features/auth/routes.js';
import { healthRoutes } from '../features/probes/routes.js';
import { imageRoutes } from '../features/images/routes.js';
import { externalServerRoutes } from '../features/servers/external.js';
import type { AppEnv } from '../http/env.js';
import { createApp } from './create-app.js';

/** Routers of the external face; each feature adds its own line. */
export function mountExternalRoutes(app: OpenAPIHono<AppEnv>): void {
  app.route('/', healthRoutes());
  app.route('/', authRoutes());
  app.route('/', accountRoutes());
  app.route('/', adminAccountRoutes());
  app.route('/', externalServerRoutes());
  app.route('/', imageRoutes());
}

/** The external face: the browser panel and the operator console. */
export function createExternalApp(deps: Deps): OpenAPIHono<AppEnv> {
  const app = createApp('external', deps);
  mountExternalRoutes(app);
  return app;
}
