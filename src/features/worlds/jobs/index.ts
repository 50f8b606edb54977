/**
 * The front door of world jobs: what every operation on a world's volume goes through — who may
 * touch the world, its lock (a lease of the coordination module), its job row, a job started under
 * the lock on a stopped server, and the runner of its step (this process, or the cluster's Job).
 */
export { isStaff, requireStopped, requireStoppedWorld, requireWorld } from './access.js';
export type { Caller } from './access.js';
export { deadLockTakers, heldFresh, holdWorld, keepLock, lockHolderKind, releaseLock, sweepFreeLocks, sweepLapsedLocks } from './lock.js';
export { failOrphanedJobs, finishJob, jobOf, newId, recordJob } from './records.js';
export { externalJobRoutes } from './routes.js';
export { JobFailure, runnerOf, startWorldJob, stepFailed, untilRecorded } from './service.js';
export type { JobDeps, JobOutcome, SettleDeps } from './service.js';
