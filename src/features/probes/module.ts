import type { FeatureModule } from '../../deps.js';
import { healthRoutes, internalProbeRoutes } from './routes.js';

/** The probes module: `/healthz` on both faces, the readiness and liveness probes on the internal one. */
export function createProbes(): FeatureModule {
  return { name: 'probes', api: {}, routes: { external: [healthRoutes()], internal: [healthRoutes(), internalProbeRoutes()] }, tasks: [] };
}
