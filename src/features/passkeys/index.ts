/**
 * The front door of the passkeys feature: WebAuthn credentials and ceremonies, the passkey sign-in
 * doors and the account's own passkeys. Other features prove a signed-in account's passkey with
 * the own-assertion ceremony (reauth, the migration step-up).
 */
export { passkeyDirectory, userHasPasskey } from './credentials.js';
export { passkeyHousekeepingTask } from './housekeeping.js';
export { beginOwnAssertion, finishOwnAssertion } from './own-assertion.js';
export type { OwnCeremony } from './own-assertion.js';
export { relyingPartyOf } from './relying-party.js';
export { passkeyRoutes } from './routes.js';
export { AssertionSchema, WebAuthnOptionsSchema, type Assertion } from './schema.js';
export { createPasskeys } from './module.js';
