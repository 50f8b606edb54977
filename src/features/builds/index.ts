/**
 * The front door of the builds feature: image builds, and the modpack submissions whose approval
 * hands a build off (submissions/). What the rest of the service may use of it.
 */
export { internalBuildRoutes } from './internal-routes.js';
export { buildRoutes } from './routes.js';
export type { BuildRunner } from './runner.js';
export type { BuildsParts } from './runner.js';
export { SimulatedBuildRunner } from './simulated-runner.js';
export { DirectoryContextStore, ObjectContextStore } from './submissions/context-store.js';
export type { ContextStore } from './submissions/context-store.js';
export { submissionRoutes } from './submissions/routes.js';
export { clusterBuildTasks } from './tasks.js';
export { buildsFinished } from './figures.js';
export { createBuilds, createBuildsParts } from './module.js';
