/**
 * The front door of accounts' API keys: the keys themselves (made, listed, revoked, checked on each
 * request with a bearer), the per-key limit claimed in slices, and the cache of checked rows the
 * key check and the session check share.
 */
export { ApiKeyCheck, presentedKey, revokeUserApiKeys } from './api-keys.js';
export { apiKeyRoutes } from './api-key-routes.js';
export { CheckedRows } from './checked-rows.js';
