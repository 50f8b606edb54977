/**
 * The front door of the operations feature: what the rest of the service may use of it.
 */
export { backupDatabase, migrateWithSafetyDump, restoreFromBundle } from './db-backup.js';
export { externalOperationsRoutes } from './external-routes.js';
export { internalOperationsRoutes } from './internal-routes.js';
export { newestRecords, recordUpdateReport } from './records.js';
export { checkDependencies, checkOwnImage } from './update-check.js';
export { createOperations } from './module.js';
