/**
 * The front door of the probes feature: what the rest of the service may use of it.
 */
export { healthRoutes, internalProbeRoutes } from './routes.js';
export { createProbes } from './module.js';
