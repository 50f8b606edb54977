/**
 * The front door of the reauth feature: how a session gives the proof that changes to the ways
 * into its account need (the guard itself is the accounts feature's `requireReauth`).
 */
export { reauthRoutes } from './routes.js';
export { createReauth } from './module.js';
