/**
 * Coordination across replicas: leases (who holds a world, a loop's round, the leadership, a
 * replica's heartbeat),
 * advisory locks (short critical sections, their keys in one list), and background tasks (loops
 * on one replica or on every replica, started and stopped in order by the composition root).
 */
export { ADVISORY_LOCKS, lockForTransaction, type AdvisoryLockName, type KeyedAdvisoryLock } from './advisory.js';
export {
  HEARTBEAT_BEAT_MS,
  HEARTBEAT_RENEW_DEADLINE_MS,
  HEARTBEAT_TTL_MS,
  HeartbeatLost,
  ReplicaHeartbeat,
  type HeartbeatDeps,
  type HeartbeatOptions,
} from './heartbeat.js';
export {
  heldBy,
  holdLease,
  LEASE_KEYS,
  leasePrefix,
  leaseOf,
  noLeaseHeldBy,
  releaseLease,
  releasePreviousLives,
  renewLease,
  sweepLapsedLeases,
  sweepLeases,
  takeLease,
  type HeldLease,
  type HoldDeps,
  type LeaseClaim,
  type LeaseRow,
  type PreviousLives,
  type TakeOptions,
} from './leases.js';
export {
  backgroundLoop,
  closingTask,
  Leadership,
  ROUND_LEASE_MS,
  ROUND_RENEW_MS,
  runOnOneReplica,
  TaskList,
  type BackgroundTask,
  type LoopDeps,
  type LoopOptions,
} from './loops.js';
