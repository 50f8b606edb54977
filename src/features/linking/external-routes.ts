import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { hasLink, setSessionCookie, signInClient } from '../accounts/index.js';
import { codeAttemptLimit, doorLimit, limited } from '../doors/index.js';
import { bindSignIn } from './bind.js';
import { BoundResponse, CodeBody, LinkStartResponse, LinkVerifiedResponse } from './schema.js';
import { verifyLinkCode } from './service.js';

const bind = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/bind',
    summary: 'Sign in with a bind code from the in-game login lobby (creates or finds the player account)',
    middleware: [doorLimit('bind')],
    request: jsonBody(CodeBody),
    responses: {
      200: json(BoundResponse, 'linked and signed in; session cookie set'),
      400: errorAnswer('invalid_code: unknown, expired or used code; bad_request'),
      403: errorAnswer('local_auth_disabled, staff_account, account_disabled, or forbidden (the operator console host)'),
      ...limited,
    },
  },
);

const linkStart = defineRoute(
  { tier: 'app', setupAllowed: true },
  {
    method: 'post',
    path: '/api/v1/account/link/start',
    summary: 'How to link a Minecraft account (the code comes from the game)',
    responses: { 200: json(LinkStartResponse, 'link state and instructions') },
  },
);

const linkVerify = defineRoute(
  { tier: 'app', setupAllowed: true },
  {
    method: 'post',
    path: '/api/v1/account/link/verify',
    summary: 'Link the Minecraft account a code from the game names',
    middleware: [codeAttemptLimit('link')],
    request: jsonBody(CodeBody),
    responses: {
      200: json(LinkVerifiedResponse, 'linked'),
      400: errorAnswer('invalid_code: unknown, expired or used code; bad_request'),
      403: errorAnswer('reauth_required: the account has a passkey or a verified address and no proof of the last 5 minutes'),
      409: errorAnswer('already_linked: another account holds this Minecraft account'),
      ...limited,
    },
  },
);

const INSTRUCTIONS =
  'Join the lobby in Minecraft and type /link to get an 8-character code, then enter it here within 10 minutes.';

/** The bind-code door and the web side of linking. External face. */
export function externalLinkingRoutes() {
  return createRouter()
    .openapi(bind, async (c) => {
      const bound = await bindSignIn(c.var.deps, c.req.valid('json').code, signInClient(c));
      setSessionCookie(c, bound.token);
      return c.json({ user_id: bound.userId, linked: true as const, mc_uuid: bound.mcUuid, auth_source: bound.authSource }, 200);
    })
    .openapi(linkStart, async (c) => c.json({ linked: await hasLink(c.var.deps.database.db, c.var.session.userId), instructions: INSTRUCTIONS }, 200))
    .openapi(linkVerify, async (c) => {
      const linked = await verifyLinkCode(c.var.deps, c.var.session, c.req.valid('json').code);
      return c.json({ linked: true as const, mc_uuid: linked.mcUuid, auth_source: linked.authSource }, 200);
    });
}
