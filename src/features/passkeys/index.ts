/**
 * The front door of the passkeys feature: what the rest of the service may use of it.
 */
export { reapExpiredCeremonies } from './ceremonies.js';
export { passkeyDirectory, userHasPasskey } from './credentials.js';
export { beginOwnAssertion, finishOwnAssertion } from './own-assertion.js';
export type { OwnCeremony } from './own-assertion.js';
export { relyingPartyOf } from './relying-party.js';
export { passkeyRoutes } from './routes.js';
export { AssertionSchema, WebAuthnOptionsSchema } from './schema.js';
