import { z } from '@hono/zod-openapi';
import { isJsonMediaType } from '../../http/body.js';
import { clientIp } from '../../http/client-ip.js';
import { requestHeader } from '../../http/request-header.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { EmailSchema, setSessionCookie, signInClient, signInRole } from '../accounts/index.js';
import { doorLimit, limited, SignedInSchema } from '../doors/index.js';
import { beginDiscoverableSignIn, beginEmailSignIn, finishDiscoverableSignIn, finishEmailSignIn } from './login-service.js';
import { AssertionSchema, WebAuthnOptionsSchema } from './schema.js';

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

/** The public passkey sign-in doors. External face. */
export function passkeyLoginRoutes() {
  return createRouter()
    .openapi(loginBegin, async (c) => c.json(await beginEmailSignIn(c.var.deps, c.req.valid('json').email), 200))
    .openapi(loginFinish, async (c) => {
      const signedIn = await finishEmailSignIn(c.var.deps, c.req.valid('json'), signInClient(c), c.var.requestId);
      setSessionCookie(c, signedIn.token);
      return c.json({ user_id: signedIn.userId, role: signInRole(signedIn.role) }, 200);
    })
    .openapi(discoverableBegin, async (c) => {
      const declaredJson = isJsonMediaType(requestHeader(c, 'content-type'));
      const begun = await beginDiscoverableSignIn(c.var.deps, { clientIp: clientIp(c), declaredJson });
      return c.json({ publicKey: begun.options, login_id: begun.loginId }, 200);
    })
    .openapi(discoverableFinish, async (c) => {
      const { login_id, assertion } = c.req.valid('json');
      const signedIn = await finishDiscoverableSignIn(c.var.deps, { loginId: login_id, assertion }, signInClient(c), c.var.requestId);
      setSessionCookie(c, signedIn.token);
      return c.json({ user_id: signedIn.userId, role: signInRole(signedIn.role) }, 200);
    });
}
