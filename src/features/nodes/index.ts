/**
 * The nodes feature: the cluster's game nodes (GET /nodes), node control as tasks (approve, cordon,
 * drain, return, remove), and the recovery round that finishes a task whose replica died.
 */
export { nodeRoutes } from './routes.js';
export { nodeTasksRecovery } from './runner.js';
export { createNodesParts, type NodesParts } from './cache.js';
export { nodeGuard } from './guard.js';
export { createNodes } from './module.js';
