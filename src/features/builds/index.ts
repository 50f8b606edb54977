/**
 * The front door of the builds feature: what the rest of the service may use of it.
 */
export { internalBuildRoutes } from './internal-routes.js';
export { watchBuildJobs } from './job-watch.js';
export { DEFAULT_BUILD_JOB_OPTIONS, KubernetesBuildRunner } from './kubernetes-job.js';
export { BuildLogCopier } from './log-copy.js';
export { buildRoutes } from './routes.js';
export type { BuildRunner } from './runner.js';
export { handOff, insertBuild } from './service.js';
export { SimulatedBuildRunner } from './simulated-runner.js';
