import type { FeatureModule } from '../deps.js';
import type { ServiceParts } from './parts.js';
import { createApp, type FaceApp } from './create-app.js';
import { openApiDocument } from './openapi.js';
import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, json } from '../http/route.js';

/** The internal face's routes: each module's, in the modules' order (src/app/modules.ts). */
export function mountInternalRoutes(app: FaceApp, modules: readonly FeatureModule[]): void {
  for (const module of modules) for (const table of module.routes.internal ?? []) app.addRoutes(table);
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
export function createInternalApp(parts: ServiceParts, modules: readonly FeatureModule[], externalApp: FaceApp): FaceApp {
  const app = createApp('internal', parts);
  mountInternalRoutes(app, modules);
  let internalDoc: unknown;
  let externalDoc: unknown;
  app.addRoutes(
    createRouter()
      .openapi(documentRoute('internal'), (c) => c.json((internalDoc ??= openApiDocument(app, 'internal')) as object, 200))
      .openapi(documentRoute('external'), (c) => c.json((externalDoc ??= openApiDocument(externalApp, 'external')) as object, 200)),
  );
  return app;
}
