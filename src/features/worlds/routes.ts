import { createRouter } from '../../http/route.js';
import { externalBackupRoutes, internalBackupRoutes } from './backups/index.js';
import { externalExportRoutes } from './exports/index.js';
import { externalFileRoutes } from './files/index.js';
import { externalJobRoutes } from './jobs/index.js';
import { externalUploadRoutes } from './uploads/index.js';

/** The worlds feature on the external face: backups, restores, jobs, files, exports, uploads. */
export function externalWorldRoutes() {
  return createRouter()
    .include(externalBackupRoutes())
    .include(externalJobRoutes())
    .include(externalFileRoutes())
    .include(externalExportRoutes())
    .include(externalUploadRoutes());
}

/** The worlds feature on the internal face: the break-glass backup. */
export function internalWorldRoutes() {
  return internalBackupRoutes();
}
