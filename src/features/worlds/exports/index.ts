/** The front door of world exports: downloads of a backup, a world, or a file or folder of one. */
export { externalExportRoutes } from './routes.js';
export { settleExport, sweepExpiredExports } from './service.js';
