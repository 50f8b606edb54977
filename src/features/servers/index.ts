/**
 * The front door of the servers feature: what the rest of the service may use of it.
 */
export { ServerCache } from './core/index.js';
export type { ServersParts } from './core/index.js';
export type { CachedServer, EndedRestart, NodeGuard, ServerChangeListener } from './core/index.js';
export { explicitStopSince, stopWords } from './wakes/index.js';
export { countServersByOwner, lastInUse, ownerOf, transferClaims } from './ownership/index.js';
export { externalServerRoutes } from './external-routes.js';
export { internalServerRoutes } from './internal-routes.js';
export { opsServerRoutes } from './ops-routes.js';
export { requireServer, syncedCache } from './core/index.js';
export { AccessChanges, MEMBER_PERMISSIONS, accessOf, admits, mayAct, requireAccess } from './core/index.js';
export type { Asker, MemberPermission, Need, ServerAccess, Standing } from './core/index.js';
export { retirementSweepTask, sweepRetirements } from './retirement-sweep.js';
export { forgetDeletedServer, type ServerRowsElsewhere } from './forget.js';
export { advanceRestarts, beginRestart, restartOf, restartsTask, type RestartRow } from './power.js';
export { holdsSlot, startMayClear, startWithinCapacity } from './wakes/index.js';
export { inMaintenance } from './service.js';
export { CodedServerNameParam, McUuidBody, McUuidSchema, ServerNameParam } from './core/index.js';
export { integerSetting, SERVER_SETTINGS, wakePolicyInForce, type WakePolicyView } from './wakes/index.js';
export { isReservedServerName, SERVER_NAME_PATTERN } from './core/index.js';
export { clusterCall } from './core/index.js';
export { SIMULATED_SYSTEM_SERVERS, startServersFeature } from './startup.js';
export { createServers, createServersParts } from './module.js';
