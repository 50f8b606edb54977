/**
 * The front door of the servers feature: what the rest of the service may use of it.
 */
export { serverCacheOf } from './cache.js';
export type { CachedServer } from './cache.js';
export { countServersByOwner, ownerOf } from './claims.js';
export { externalServerRoutes } from './external.js';
export { internalServerRoutes } from './internal.js';
export { requireServer, syncedCache } from './lookup.js';
export { isOwnerOrStaff } from './access.js';
export { retirementSweepTask } from './retirement-sweep.js';
export { McUuidBody, McUuidSchema, ServerNameParam } from './schema.js';
export { integerSetting, SERVER_SETTINGS } from './settings.js';
export { holdsSlot } from './capacity.js';
export { clusterCall } from './lookup.js';
export { SIMULATED_SYSTEM_SERVERS, startServersFeature, stopServersFeature } from './startup.js';
