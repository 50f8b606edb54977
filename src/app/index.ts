import type { ServiceParts } from './parts.js';
import { createExternalApp } from './external.js';
import { createInternalApp } from './internal.js';

/** Both faces: each feature's routes are handed the parts they use; the front door sees the infrastructure. */
export function createApps(parts: ServiceParts) {
  const external = createExternalApp(parts);
  const internal = createInternalApp(parts, external);
  return { internal, external };
}
export type { ServiceParts } from './parts.js';
