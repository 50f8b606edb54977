/**
 * The front door of the worlds feature: what the rest of the service may use of it.
 */
export { runFilesCommand } from './files-command.js';
export { worldsTasks } from './housekeeping.js';
export { externalWorldRoutes, internalWorldRoutes } from './routes.js';
export { createWorldsRuntime } from './runtime.js';
export type { WorldsRuntime } from './runtime.js';
export { runVolumeStep, volumeStepSchema } from './volume-ops.js';
export type { StepOutcome, VolumeStep } from './volume-ops.js';
