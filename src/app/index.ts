import type { Deps } from '../deps.js';
import { createExternalApp } from './external.js';
import { createInternalApp } from './internal.js';

export function createApps(deps: Deps) {
  const external = createExternalApp(deps);
  const internal = createInternalApp(deps, external);
  return { internal, external };
}
