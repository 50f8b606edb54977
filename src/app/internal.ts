import type { ServiceParts } from './parts.js';
import { internalOperationsRoutes } from '../features/operations/index.js';
import { healthRoutes, internalProbeRoutes } from '../features/probes/index.js';
import { internalServerRoutes, opsServerRoutes } from '../features/servers/index.js';
import { internalLinkingRoutes } from '../features/linking/index.js';
import { internalOpLoginRoutes } from '../features/op-login/index.js';
import { internalMigrationRoutes } from '../features/migration/index.js';
import { reclaimRoutes } from '../features/reclaim/index.js';
import { verifierRoutes } from '../features/verifier/index.js';
import { internalBuildRoutes } from '../features/builds/index.js';
import { internalWorldRoutes } from '../features/worlds/index.js';
import { internalSettingsRoutes } from '../features/settings/index.js';
import { createApp, type FaceApp } from './create-app.js';
import { openApiDocument } from './openapi.js';
import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, json } from '../http/route.js';

/** Routers of the internal face; each feature adds its own line. */
export function mountInternalRoutes(app: FaceApp, parts: ServiceParts): void {
  app.addRoutes(healthRoutes());
  app.addRoutes(internalProbeRoutes());
  app.addRoutes(internalServerRoutes(parts));
  app.addRoutes(opsServerRoutes(parts));
  app.addRoutes(verifierRoutes(parts));
  app.addRoutes(internalOperationsRoutes());
  app.addRoutes(internalBuildRoutes(parts));
  app.addRoutes(internalLinkingRoutes());
  app.addRoutes(internalOpLoginRoutes());
  app.addRoutes(internalMigrationRoutes());
  app.addRoutes(reclaimRoutes(parts));
  app.addRoutes(internalWorldRoutes(parts));
  app.addRoutes(internalSettingsRoutes(parts));
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
export function createInternalApp(parts: ServiceParts, externalApp: FaceApp): FaceApp {
  const app = createApp('internal', parts);
  mountInternalRoutes(app, parts);
  let internalDoc: unknown;
  let externalDoc: unknown;
  app.addRoutes(
    createRouter()
      .openapi(documentRoute('internal'), (c) => c.json((internalDoc ??= openApiDocument(app, 'internal')) as object, 200))
      .openapi(documentRoute('external'), (c) => c.json((externalDoc ??= openApiDocument(externalApp, 'external')) as object, 200)),
  );
  return app;
}
