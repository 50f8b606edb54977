import { z } from '@hono/zod-openapi';
import { clientIp } from '../../http/client-ip.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { clearSessionCookie, deviceToken, sessionToken, setDeviceCookie, setSessionCookie, signInClient, signInRole } from '../accounts/index.js';
import { doorLimit, limited, SignedInSchema } from '../doors/index.js';
import type { AppDeps } from '../../http/env.js';
import type { AuthParts } from './hash-limit.js';
import { changePassword, passwordSignIn, signOut } from './password-service.js';

const login = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/login',
    summary: 'Local password sign-in',
    middleware: [doorLimit('login')],
    request: jsonBody(z.strictObject({ username: z.string().min(1).max(254), password: z.string().min(1).max(1024) })),
    responses: {
      200: json(SignedInSchema.extend({ must_change_password: z.boolean() }), 'signed in; session cookie set'),
      401: errorAnswer('invalid_credentials, the same for every failure'),
      403: errorAnswer('account_disabled, local_auth_disabled, or forbidden (player on the console host)'),
      ...limited,
    },
  },
);

const logout = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/logout',
    summary: 'End the session of this cookie (idempotent) and clear the cookie',
    responses: { 200: json(z.object({ ok: z.literal(true) }), 'signed out') },
  },
);

const changePasswordRoute = defineRoute(
  { tier: 'app' },
  {
    method: 'post',
    path: '/api/v1/auth/change-password',
    summary: 'Change the local password; every other session of the account is revoked',
    request: jsonBody(z.strictObject({ current_password: z.string().min(1).max(1024), new_password: z.string().min(1).max(1024) })),
    responses: {
      200: json(z.object({ ok: z.literal(true) }), 'changed'),
      401: errorAnswer('invalid_credentials: the current password is wrong'),
      403: errorAnswer('reauth_required, local_auth_disabled, or forbidden, setup_required, cross_site'),
      ...limited,
    },
  },
);

/** Local password sign-in, password change, and logout. External face. */
export function passwordRoutes(deps: AppDeps & AuthParts) {
  return createRouter()
    .openapi(login, async (c) => {
      const signedIn = await passwordSignIn(deps, c.req.valid('json'), signInClient(c), sessionToken(c), deviceToken(c));
      setSessionCookie(c, signedIn.token);
      setDeviceCookie(c, signedIn.deviceToken);
      return c.json({ user_id: signedIn.userId, role: signInRole(signedIn.role), must_change_password: signedIn.mustChangePassword }, 200);
    })
    .openapi(logout, async (c) => {
      await signOut(c.var.deps, sessionToken(c));
      clearSessionCookie(c);
      return c.json({ ok: true as const }, 200);
    })
    .openapi(changePasswordRoute, async (c) => {
      const body = c.req.valid('json');
      await changePassword(deps, c.var.session, { current: body.current_password, next: body.new_password, clientIp: clientIp(c) }, c.var.requestId);
      return c.json({ ok: true as const }, 200);
    });
}
