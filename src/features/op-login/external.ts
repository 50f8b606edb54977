import { z } from '@hono/zod-openapi';
import { clientIp } from '../../http/client-ip.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { isConsoleHost, requestHost, startSession, signInRole } from '../accounts/index.js';
import { requireLocalAuth, doorLimit, limited, SignedInSchema } from '../auth/index.js';
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
      requireLocalAuth(c);
      const { deps } = c.var;
      if (!deps.mail) throw new DomainError('mail_unavailable', 'E-mail is not available on this installation.');
      const started = await startOpLogin(deps, {
        email: c.req.valid('json').email,
        clientIp: clientIp(c),
        userAgent: c.req.header('user-agent') ?? '',
        requestId: c.var.requestId,
      });
      return c.json({ request_id: started.requestId, expires_at: started.expiresAt.toISOString() }, 202);
    })
    .openapi(status, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      return c.json({ approved: await isApproved(deps.database.db, c.req.valid('param').id, deps.clock.now()) }, 200);
    })
    .openapi(finish, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      // Checked before the code, so a finish on the wrong host spends no attempt.
      if (!isConsoleHost(deps.config, requestHost(c))) {
        throw new DomainError('forbidden', 'An operator login finishes on the operator console only.');
      }
      const body = c.req.valid('json');
      const db = deps.database.db;
      const user = await finishOpLogin(db, body.request_id.trim(), body.code.trim(), deps.clock.now());
      await startSession(c, db, user.userId, 'operator_login');
      return c.json({ user_id: user.userId, role: signInRole(user.role) }, 200);
    });
}
