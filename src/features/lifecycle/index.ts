/**
 * The front door of the lifecycle feature: what the rest of the service may use of it.
 */
export { createLifecycle } from './start.js';
