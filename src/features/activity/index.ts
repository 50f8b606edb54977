/**
 * The front door of the activity feature: reading the audit log (`GET /audit` for staff, a
 * server's activity for its owner). Writing stays `features/audit`'s `writeAudit`.
 */
export { activityRoutes } from './routes.js';
export { createActivity } from './module.js';
