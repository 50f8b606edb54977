import type { FeatureModule } from '../deps.js';
import type { ServiceParts } from './parts.js';
import { createApp, type FaceApp } from './create-app.js';
import { mountPages } from './web.js';

/** The external face's routes: each module's, in the modules' order (src/app/modules.ts). */
export function mountExternalRoutes(app: FaceApp, modules: readonly FeatureModule[]): void {
  for (const module of modules) for (const table of module.routes.external ?? []) app.addRoutes(table);
}

/** The external face: the browser panel and the operator console. */
export function createExternalApp(parts: ServiceParts, modules: readonly FeatureModule[]): FaceApp {
  const app = createApp('external', parts);
  mountExternalRoutes(app, modules);
  mountPages(app);
  return app;
}
