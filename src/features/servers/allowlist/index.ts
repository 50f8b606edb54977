/** The front door of servers' wake allowlists and their routes. */
export { addJoinedPlayer, allowlistedServers, linkedIdentityOnWakeAllowlist, onWakeAllowlist } from './allowlist.js';
export { allowlistRoutes } from './allowlist-routes.js';
