/** The front door of servers' ownership: claims and members, and the member routes. */
export { claimForPlayer, claimForUser, countServersByOwner, lastInUse, ownerOf, ownersOf, serversOwnedBy, transferClaims } from './claims.js';
export { membershipsOf } from './members.js';
export { memberRoutes } from './member-routes.js';
