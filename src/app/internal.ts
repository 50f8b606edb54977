import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Deps } from '../deps.js';
import { healthRoutes, internalProbeRoutes } from '../features/probes/routes.js';
import { internalServerRoutes } from '../features/servers/internal.js';
import { verifierRoutes } from '../features/verifier/routes.js';
import type { AppEnv } from '../http/env.js';
import { createApp } from './create-app.js';
import { openApiDocument } from './openapi.js';

/** Routers of the internal face; each feature adds its own line. */
export function mountInternalRoutes(app: OpenAPIHono<AppEnv>): void {
  app.route('/', healthRoutes());
  app.route('/', internalProbeRoutes());
  app.route('/', internalServerRoutes());
  app.route('/', verifierRoutes());
}

/**
 * The internal face (proxy, limbo, build, ops). It also publishes both faces' OpenAPI documents:
 * the external face must not describe more than the panel needs.
 */
export function createInternalApp(deps: Deps, externalApp: OpenAPIHono<AppEnv>): OpenAPIHono<AppEnv> {
  const app = createApp('internal', deps);
  mountInternalRoutes(app);
  let internalDoc: unknown;
  let externalDoc: unknown;
  app.get('/openapi/internal.json', (c) => c.json((internalDoc ??= openApiDocument(app, 'internal'))));
  app.get('/openapi/external.json', (c) => c.json((externalDoc ??= openApiDocument(externalApp, 'external'))));
  return app;
}
