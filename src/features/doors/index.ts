/**
 * The front door of the doors feature: what every public sign-in door shares (the e-mail,
 * password, passkey, bind and operator-login doors of the auth, passkeys, linking and op-login
 * features). The per-address limit and its bucket, the local-auth switch, the console rule, and the
 * answers a door documents.
 */
export { addressKey } from './address.js';
export { refusePlayerOnConsole, requireLocalAuth } from './guards.js';
export { codeAttemptLimit, doorLimit, giveTokenBack, rateLimited, takeToken } from './rate-limit.js';
export { SignedInSchema, limited, type SignedIn } from './schema.js';
