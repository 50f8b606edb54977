import { z } from '@hono/zod-openapi';
import { encodeBase64urlNoPadding } from '@oslojs/encoding';
import type { Context } from 'hono';
import { clientIp } from '../../http/client-ip.js';
import { isJsonMediaType } from '../../http/body.js';
import type { AppEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { requestHeader } from '../../http/request-header.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { randomToken, sha256Hex } from '../../lib/secrets.js';
import { EmailSchema } from '../accounts/schema.js';
import { startSession } from '../accounts/session-service.js';
import { findLiveUserByEmail, findUserById } from '../accounts/users-service.js';
import { signInRole } from '../accounts/views.js';
import { addressKey } from '../auth/address.js';
import { refusePlayerOnConsole, requireLocalAuth } from '../auth/guards.js';
import { doorLimit } from '../auth/rate-limit.js';
import { limited, SignedInSchema } from '../auth/schema.js';
import { addDiscoverableCeremony, addLoginCeremony, takeCeremony } from './ceremonies.js';
import { findCredential, listCredentials, type CredentialRow } from './credentials.js';
import { invalidAssertion } from './own-assertion.js';
import { requireRelyingParty, type RelyingParty } from './relying-party.js';
import { AssertionSchema, WebAuthnOptionsSchema, type Assertion } from './schema.js';
import { requestOptions, signedChallenge, userHandleOf, verifyAssertion } from './webauthn.js';

const refusals = {
  403: errorAnswer('local_auth_disabled, or forbidden (a player on the console host)'),
  503: errorAnswer('passkey_unavailable: no relying party is configured'),
  ...limited,
};
const LoginId = z.string().min(1).max(128).regex(/^[A-Za-z0-9_-]+$/);

const loginBegin = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/passkey/login/begin',
    summary: 'Start a passkey sign-in for an address: the WebAuthn request options, verbatim',
    middleware: [doorLimit('passkey')],
    request: jsonBody(z.strictObject({ email: EmailSchema })),
    responses: {
      200: json(WebAuthnOptionsSchema, 'request options for navigator.credentials.get()'),
      400: errorAnswer('bad_request, or no_passkey (no passkey for this address)'),
      ...refusals,
    },
  },
);

const loginFinish = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/passkey/login/finish',
    summary: 'Sign in with the assertion',
    middleware: [doorLimit('passkey')],
    request: jsonBody(z.strictObject({ email: EmailSchema, assertion: AssertionSchema })),
    responses: { 200: json(SignedInSchema, 'signed in; session cookie set'), 400: errorAnswer('bad_request or passkey_login_invalid'), ...refusals },
  },
);

const discoverableBegin = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/passkey/login/discoverable/begin',
    summary: 'Start a sign-in with no address typed: request options with an empty allowCredentials, and a login_id (no body is read; Content-Type application/json is required)',
    middleware: [doorLimit('passkey')],
    responses: {
      200: json(z.object({ publicKey: WebAuthnOptionsSchema, login_id: z.string() }), 'options and the handle to echo at finish'),
      415: errorAnswer('unsupported_media_type: Content-Type must be application/json'),
      ...refusals,
      429: errorAnswer('too_many_challenges (too many sign-ins in progress overall or from this network), or rate_limited'),
    },
  },
);

const discoverableFinish = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/passkey/login/discoverable/finish',
    summary: 'Sign in with the assertion; the account is the one the passkey names',
    middleware: [doorLimit('passkey')],
    request: jsonBody(z.strictObject({ login_id: LoginId, assertion: AssertionSchema })),
    responses: { 200: json(SignedInSchema, 'signed in; session cookie set'), 400: errorAnswer('bad_request or passkey_login_invalid'), ...refusals },
  },
);

/** The same 400 for an unknown address and for one without a passkey. */
const noPasskey = () => new DomainError('no_passkey', 'No passkey is bound to this address; sign in another way.');

/**
 * The end of both sign-ins: the assertion verified against the ceremony, then a session. Every
 * refusal is the same 400, so that finish tells nothing about accounts or credentials.
 */
async function signInWith(
  c: Context<AppEnv>,
  rp: RelyingParty,
  input: { assertion: Assertion; challenge: string | undefined; credential: CredentialRow | undefined; userId: string | undefined; door: string },
) {
  const { deps } = c.var;
  const db = deps.database.db;
  const refused = (reason: string) => deps.log.info({ request_id: c.var.requestId, door: input.door, reason }, 'passkey sign-in refused');
  const user = input.userId === undefined ? undefined : await findUserById(db, input.userId);
  if (input.challenge === undefined || !input.credential || !user || user.id !== input.credential.userId || user.disabled || user.deletedAt !== null) {
    refused(input.challenge === undefined ? 'no live ceremony' : 'no such credential or account');
    throw invalidAssertion();
  }
  const verified = await verifyAssertion(db, rp, { assertion: input.assertion, expectedChallenge: input.challenge, credential: input.credential, now: deps.clock.now() }, refused);
  if (!verified) throw invalidAssertion();
  refusePlayerOnConsole(c, user.role);
  await startSession(c, db, user.id, 'passkey');
  return c.json({ user_id: user.id, role: signInRole(user.role) }, 200);
}

/** The door's body is not read, but its Content-Type is the cross-origin guard of the other doors. */
function requireJsonContentType(c: Context<AppEnv>): void {
  if (!isJsonMediaType(requestHeader(c, 'content-type'))) throw new DomainError('unsupported_media_type');
}

/** The public passkey sign-in doors. External face. */
export function passkeyLoginRoutes() {
  return createRouter()
    .openapi(loginBegin, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const rp = requireRelyingParty(deps.config);
      const db = deps.database.db;
      const user = await findLiveUserByEmail(db, c.req.valid('json').email);
      if (!user || user.disabled) throw noPasskey();
      const credentials = await listCredentials(db, user.id);
      if (credentials.length === 0) throw noPasskey();
      const options = await requestOptions(rp, deps.random, credentials);
      await addLoginCeremony(db, { subject: user.id, userId: user.id, challenge: options.challenge, now: deps.clock.now() });
      return c.json(options, 200);
    })
    .openapi(loginFinish, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const rp = requireRelyingParty(deps.config);
      const { email, assertion } = c.req.valid('json');
      const db = deps.database.db;
      const user = await findLiveUserByEmail(db, email);
      const challenge = signedChallenge(assertion);
      const live =
        user && challenge !== undefined ? await takeCeremony(db, { purpose: 'login', subject: user.id, challenge, now: deps.clock.now() }) : undefined;
      const credential = live && (await findCredential(db, assertion.id));
      return signInWith(c, rp, { assertion, challenge: live?.challenge, credential, userId: user?.id, door: 'passkey_login' });
    })
    .openapi(discoverableBegin, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const rp = requireRelyingParty(deps.config);
      requireJsonContentType(c);
      const loginId = randomToken(deps.random, 32);
      const options = await requestOptions(rp, deps.random, []);
      const added = await addDiscoverableCeremony(
        deps.database.db,
        // One network is an IPv4 host or an IPv6 /48.
        { subject: sha256Hex(loginId), challenge: options.challenge, network: addressKey(clientIp(c), 3), now: deps.clock.now() },
        { global: deps.config.webauthnChallengeCap, perNetwork: deps.config.webauthnChallengeCapPerNetwork },
      );
      if (!added) {
        throw new DomainError('too_many_challenges', 'Too many passkey sign-ins are in progress; try again in a few minutes.', { retryAfterSeconds: 60 });
      }
      return c.json({ publicKey: options, login_id: loginId }, 200);
    })
    .openapi(discoverableFinish, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const rp = requireRelyingParty(deps.config);
      const { login_id, assertion } = c.req.valid('json');
      const db = deps.database.db;
      const live = await takeCeremony(db, { purpose: 'discoverable', subject: sha256Hex(login_id), now: deps.clock.now() });
      const credential = live && (await findCredential(db, assertion.id));
      // The account is the one the credential belongs to, and the authenticator must name it too.
      const handle = assertion.response.userHandle;
      const named = credential && handle === encodeBase64urlNoPadding(userHandleOf(credential.userId)) ? credential.userId : undefined;
      return signInWith(c, rp, { assertion, challenge: live?.challenge, credential, userId: named, door: 'passkey_discoverable' });
    });
}
