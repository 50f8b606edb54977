import type { Deps } from '../deps.js';
import { internalOperationsRoutes } from '../features/operations/internal.js';
import { healthRoutes, internalProbeRoutes } from '../features/probes/routes.js';
import { internalServerRoutes } from '../features/servers/internal.js';
import { internalLinkingRoutes } from '../features/linking/internal.js';
import { internalOpLoginRoutes } from '../features/op-login/internal.js';
import { internalMigrationRoutes } from '../features/migration/internal.js';
import { reclaimRoutes } from '../features/reclaim/routes.js';
import { verifierRoutes } from '../features/verifier/routes.js';
import { internalBuildRoutes } from '../features/builds/internal-routes.js';
import { internalWorldRoutes } from '../features/worlds/routes.js';
import { createApp, type FaceApp } from './create-app.js';
import { openApiDocument } from './openapi.js';
import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, json } from '../http/route.js';

/** Routers of the internal face; each feature adds its own line. */
export function mountInternalRoutes(app: FaceApp): void {
  app.addRoutes(healthRoutes());
  app.addRoutes(internalProbeRoutes());
  app.addRoutes(internalServerRoutes());
  app.addRoutes(verifierRoutes());
  app.addRoutes(internalOperationsRoutes());
  app.addRoutes(internalBuildRoutes());
  app.addRoutes(internalLinkingRoutes());
  app.addRoutes(internalOpLoginRoutes());
  app.addRoutes(internalMigrationRoutes());
  app.addRoutes(reclaimRoutes());
  app.addRoutes(internalWorldRoutes());
}

/** The route of one face's OpenAPI document (not part of the documents themselves). */
const documentRoute = (face: 'internal' | 'external') =>
  defineRoute(
    { tier: 'public' },
    {
      method: 'get',
      path: `/openapi/${face}.json`,
      hide: true,
      responses: { 200: json(z.object({}).passthrough(), `the ${face} face's OpenAPI 3.1 document`) },
    },
  );

/**
 * The internal face (proxy, limbo, build, ops). It also publishes both faces' OpenAPI documents:
 * the external face must not describe more than the panel needs.
 */
export function createInternalApp(deps: Deps, externalApp: FaceApp): FaceApp {
  const app = createApp('internal', deps);
  mountInternalRoutes(app);
  let internalDoc: unknown;
  let externalDoc: unknown;
  app.addRoutes(
    createRouter()
      .openapi(documentRoute('internal'), (c) => c.json((internalDoc ??= openApiDocument(app, 'internal')) as object, 200))
      .openapi(documentRoute('external'), (c) => c.json((externalDoc ??= openApiDocument(externalApp, 'external')) as object, 200)),
  );
  return app;
}
