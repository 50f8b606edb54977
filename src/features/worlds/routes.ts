import { createRouter } from '../../http/route.js';
import { externalBackupRoutes, internalBackupRoutes } from './backup-routes.js';
import { externalExportRoutes } from './export-routes.js';
import { externalFileRoutes } from './file-routes.js';
import { externalUploadRoutes } from './upload-routes.js';

/** The worlds feature on the external face: backups, restores, jobs, files, exports. */
export function externalWorldRoutes() {
  return createRouter().include(externalBackupRoutes()).include(externalFileRoutes()).include(externalExportRoutes()).include(externalUploadRoutes());
}

/** The worlds feature on the internal face: the break-glass backup. */
export function internalWorldRoutes() {
  return internalBackupRoutes();
}
