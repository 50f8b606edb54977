import { createRouter } from '../../http/route.js';
import { externalBackupRoutes, internalBackupRoutes } from './backups/index.js';
import { externalExportRoutes } from './exports/index.js';
import { externalFileRoutes } from './files/index.js';
import { externalJobRoutes } from './jobs/index.js';
import { externalUploadRoutes } from './uploads/index.js';
import type { WorldsParts } from './volumes/index.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';

/** The worlds feature on the external face: backups, restores, jobs, files, exports, uploads. */
export function externalWorldRoutes(deps: AppDeps & WorldsParts & ServersParts) {
  return createRouter()
    .include(externalBackupRoutes(deps))
    .include(externalJobRoutes(deps))
    .include(externalFileRoutes(deps))
    .include(externalExportRoutes(deps))
    .include(externalUploadRoutes(deps));
}

/** The worlds feature on the internal face: the break-glass backup. */
export function internalWorldRoutes(deps: AppDeps & WorldsParts & ServersParts) {
  return internalBackupRoutes(deps);
}
