import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { EmailSchema, setSessionCookie, signInClient, UsernameSchema } from '../accounts/index.js';
import { doorLimit, limited } from '../doors/index.js';
import { redeemSetupToken, setupStatus } from './setup-service.js';
import { SetupStateSchema } from './setup-state.js';
import { ownerExists } from './setup-token.js';
import type { AccountsParts } from '../accounts/index.js';
import type { AppDeps } from '../../http/env.js';

const redeem = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/setup/redeem',
    summary:
      'Spend an owner token: a first-run token creates the owner, a recovery token (npm run recover-owner) signs in as its owner; either way a session in setup lockdown',
    middleware: [doorLimit('setup')],
    request: jsonBody(
      z.strictObject({ token: z.string().min(1).max(256), username: UsernameSchema.optional(), email: EmailSchema.optional() }),
    ),
    responses: {
      200: json(SetupStateSchema, 'owner created; session cookie set'),
      400: errorAnswer('setup_token_invalid (unknown, spent or expired; the same for each), or bad_request (a recovery token takes no username or email)'),
      403: errorAnswer('local_auth_disabled'),
      409: errorAnswer('conflict: the username or e-mail is taken'),
      ...limited,
    },
  },
);

const status = defineRoute(
  { tier: 'app', setupAllowed: true },
  {
    method: 'get',
    path: '/api/v1/auth/setup/status',
    summary: 'What first-run setup remains for the signed-in account',
    responses: { 200: json(SetupStateSchema, 'the setup state') },
  },
);

const ownerStatus = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: '/api/v1/auth/owner-status',
    summary: 'Whether the installation has an owner yet',
    responses: { 200: json(z.object({ owner_bound: z.boolean() }), 'owner bound or not') },
  },
);

/** First-run setup: the token door, the setup state, whether an owner exists. External face. */
export function setupRoutes(deps: AppDeps & AccountsParts) {
  return createRouter()
    .openapi(redeem, async (c) => {
      const redeemed = await redeemSetupToken(deps, c.req.valid('json'), signInClient(c), c.var.requestId);
      setSessionCookie(c, redeemed.token);
      return c.json(redeemed.state, 200);
    })
    .openapi(status, async (c) => c.json(await setupStatus(deps, c.var.session), 200))
    .openapi(ownerStatus, async (c) => c.json({ owner_bound: await ownerExists(deps.database.db) }, 200));
}
