/**
 * The front door of the submissions feature: what the rest of the service may use of it.
 */
export { contextAnswer, contextResponse } from './context-response.js';
export { DirectoryContextStore } from './context-store.js';
export type { ContextStore } from './context-store.js';
export { submissionRoutes } from './routes.js';
export { SubmissionIdParam } from './schema.js';
export { openContext } from './service.js';
export { submissionIdOf } from './views.js';
