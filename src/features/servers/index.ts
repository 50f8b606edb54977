/**
 * The front door of the servers feature: what the rest of the service may use of it.
 */
export { ServerCache } from './cache.js';
export type { ServersParts } from './cache.js';
export type { CachedServer, EndedRestart, ServerChangeListener } from './cache.js';
export { explicitStopSince, stopWords } from './stops.js';
export { countServersByOwner, ownerOf } from './claims.js';
export { externalServerRoutes } from './external.js';
export { internalServerRoutes } from './internal.js';
export { opsServerRoutes } from './ops-routes.js';
export { requireServer, syncedCache } from './lookup.js';
export { AccessChanges, MEMBER_PERMISSIONS, accessOf, admits, mayAct, requireAccess } from './access.js';
export type { Asker, MemberPermission, Need, ServerAccess, Standing } from './access.js';
export { retirementSweepTask } from './retirement-sweep.js';
export { forgetDeletedServer, type ServerRowsElsewhere } from './forget.js';
export { advanceRestarts, beginRestart, restartOf, restartsTask, type RestartRow } from './power.js';
export { holdsSlot, startWithinCapacity } from './capacity.js';
export { inMaintenance } from './service.js';
export { CodedServerNameParam, McUuidBody, McUuidSchema, ServerNameParam } from './schema.js';
export { integerSetting, SERVER_SETTINGS, wakePolicyInForce, type WakePolicyView } from './settings.js';
export { isReservedServerName, SERVER_NAME_PATTERN } from './names.js';
export { clusterCall } from './lookup.js';
export { SIMULATED_SYSTEM_SERVERS, startServersFeature, stopServersFeature } from './startup.js';
