/** The front door of servers' core: the server cache and lookups, names, schemas, views and the one access rule (every other part of servers, and the features above, read these). */
export { AccessChanges, accessOf, admits, type Asker, mayAct, MEMBER_PERMISSIONS, type MemberPermission, type Need, ownerOrStaff, requireAccess, type ServerAccess, type Standing } from './access.js';
export { isReservedServerName, SERVER_NAME_PATTERN } from './names.js';
export { ClaimResponse, CodedServerNameParam, CreateServerBody, type CreateServerInput, CreateServerResponse, DesiredStateResponse, type FleetServer, FleetServerSchema, McUuidBody, McUuidSchema, MenuResponse, type MyServerView, MyServerViewSchema, PatchServerBody, type PatchServerInput, RetiringSchema, type RetiringView, type ServerInfo, ServerInfoSchema, type ServerMenu, ServerNameParam, ServerStatusSchema, WakeInternalResponse } from './schema.js';
export { type CachedServer, type EndedRestart, infoJsonOf, type NodeGuard, ServerCache, type ServerChangeListener, type ServersParts } from './cache.js';
export { clusterCall, requireServer, serverByHost, serverByName, syncedCache } from './lookup.js';
