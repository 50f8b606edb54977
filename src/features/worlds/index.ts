/**
 * The front door of the worlds feature: what the rest of the service may use of it. Its parts are
 * sub-features with front doors of their own: jobs (the lock, the job rows, starting a job, who may
 * touch a world), volumes (what runs on a world's volume, here or in a Job's pod), settings,
 * backups, exports, files, uploads and reclaim.
 */
export { worldsTasks } from './housekeeping.js';
export { externalWorldRoutes, internalWorldRoutes } from './routes.js';
export { createWorldsRuntime } from './volumes/index.js';
export type { WorldsParts, WorldsRuntime } from './volumes/index.js';
export { runFilesCommand, runVolumeStep } from './volumes/index.js';
export { pruneScheduledBackups, startBackup } from './backups/index.js';
export { lockHolderKind } from './jobs/index.js';
export type { JobDeps } from './jobs/index.js';
export { holdWorld, jobOf, requireStopped } from './jobs/index.js';
export { archiveForMove, releaseForMove, restoreForMove } from './backups/index.js';
export { deadLockTakers, heldFresh } from './jobs/index.js';
export { backupFigures, backupJobsFinished } from './figures.js';
export { createWorlds, createWorldsParts } from './module.js';
