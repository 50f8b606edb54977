import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { setSessionCookie, signInClient, signInRole } from '../accounts/index.js';
import { doorLimit, limited, SignedInSchema } from '../doors/index.js';
import { FinishBody, OpLoginIdParam, StartBody, StartedResponse } from './schema.js';
import { finishOpLogin, isApproved, startOpLogin } from './service.js';

const start = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/op-login/start',
    summary: 'Start an operator-console sign-in: a staff address gets a mailed code and a pending request',
    middleware: [doorLimit('op-login')],
    request: jsonBody(StartBody),
    responses: {
      202: json(StartedResponse, 'the same answer for every address'),
      403: errorAnswer('local_auth_disabled'),
      502: errorAnswer('mail_undeliverable'),
      503: errorAnswer('mail_unavailable'),
      ...limited,
    },
  },
);

const status = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: '/api/v1/auth/op-login/status/{id}',
    summary: 'Whether the request was approved in game (the browser polls; no door limit)',
    request: { params: OpLoginIdParam },
    responses: { 200: json(z.object({ approved: z.boolean() }), 'approval state'), 403: errorAnswer('local_auth_disabled') },
  },
);

const finish = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/op-login/finish',
    summary: 'Finish an approved operator login with the mailed code (operator console host only)',
    middleware: [doorLimit('op-login-finish')],
    request: jsonBody(FinishBody),
    responses: {
      200: json(SignedInSchema, 'signed in; session cookie set'),
      400: errorAnswer('op_login_invalid: unknown, unapproved, expired or spent request, or a wrong code; bad_request'),
      403: errorAnswer('local_auth_disabled, or forbidden: not the operator console host'),
      ...limited,
    },
  },
);

/** The browser's half of operator login. External face, public. */
export function externalOpLoginRoutes() {
  return createRouter()
    .openapi(start, async (c) => {
      const started = await startOpLogin(c.var.deps, c.req.valid('json').email, signInClient(c), c.var.requestId);
      return c.json({ request_id: started.requestId, expires_at: started.expiresAt.toISOString() }, 202);
    })
    .openapi(status, async (c) => c.json({ approved: await isApproved(c.var.deps, c.req.valid('param').id) }, 200))
    .openapi(finish, async (c) => {
      const body = c.req.valid('json');
      const signedIn = await finishOpLogin(c.var.deps, { requestId: body.request_id, code: body.code }, signInClient(c));
      setSessionCookie(c, signedIn.token);
      return c.json({ user_id: signedIn.userId, role: signInRole(signedIn.role) }, 200);
    });
}
