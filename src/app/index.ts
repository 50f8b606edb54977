import type { ServiceParts } from './parts.js';
import { createExternalApp } from './external.js';
import { createInternalApp } from './internal.js';
import { createModules } from './modules.js';
import type { FeatureModule } from '../deps.js';

/**
 * Both faces, mounting the routes of the feature modules (made here from the parts unless the
 * service hands the ones whose tasks it runs); the front door sees the infrastructure.
 */
export function createApps(parts: ServiceParts, modules: readonly FeatureModule[] = createModules(parts)) {
  const external = createExternalApp(parts, modules);
  const internal = createInternalApp(parts, modules, external);
  return { internal, external };
}
export type { ServiceParts } from './parts.js';
export { createModules } from './modules.js';
