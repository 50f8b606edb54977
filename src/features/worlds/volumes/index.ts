/**
 * The front door of world volumes: what runs on a world's files, in this process on a folder (the
 * simulated cluster) or in a Job's pod on the server's claim (src/cli/world-job.ts), and how this
 * process reaches a volume at all.
 */
export { hashStream, unpackWorld } from './archive.js';
export { runFilesCommand } from './file-job.js';
export { uploadWorldFile } from './files.js';
export { worldPath } from './paths.js';
export { fileOpsOf, localFolders } from './folders.js';
export type { WorldFolders } from './runtime.js';
export { WorldPath } from './schema.js';
export { downloadTarget, recoverWorldFolder, runVolumeStep, swapInRestoredWorld } from './steps.js';
export { createWorldsRuntime, JobTracker, KUBERNETES_NEEDS_S3 } from './runtime.js';
export type { WorldsParts, WorldsRuntime } from './runtime.js';
