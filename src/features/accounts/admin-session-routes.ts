import { createRouter, defineRoute, errorAnswer, json } from '../../http/route.js';
import { removeUserPasskeys, revokeAllUserSessions, revokeUserSession, userSessions } from './admin-service.js';
import { OkSchema, SessionListSchema, TokenHashParam, UserIdParam } from './schema.js';
import type { AccountsParts } from './parts.js';
import type { AppDeps } from '../../http/env.js';

const admin = { tier: 'admin' } as const;

const listUserSessions = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/users/{id}/sessions',
  summary: "A user's live sessions, newest first",
  request: { params: UserIdParam },
  responses: { 200: json(SessionListSchema, 'sessions'), 404: errorAnswer('no such user') },
});

const revokeAll = defineRoute(admin, {
  method: 'delete',
  path: '/api/v1/users/{id}/sessions',
  summary: "Sign a user out everywhere: every live session is revoked",
  request: { params: UserIdParam },
  responses: { 200: json(OkSchema, 'revoked'), 403: errorAnswer('forbidden: only an owner manages staff'), 404: errorAnswer('no such user') },
});

const revokeOne = defineRoute(admin, {
  method: 'delete',
  path: '/api/v1/users/{id}/sessions/{token_hash}',
  summary: "Revoke one of a user's sessions",
  request: { params: UserIdParam.extend(TokenHashParam.shape) },
  responses: { 200: json(OkSchema, 'revoked (the original answers `{ok: true}`)'), 404: errorAnswer('session_not_found, or no such user') },
});

const removePasskeys = defineRoute(admin, {
  method: 'delete',
  path: '/api/v1/users/{id}/passkeys',
  summary: "Remove every passkey of a user (a lost authenticator); their sessions stay",
  request: { params: UserIdParam },
  responses: { 200: json(OkSchema, 'removed'), 403: errorAnswer('forbidden: only an owner manages staff'), 404: errorAnswer('no such user') },
});

/** A user's sessions and passkeys, for staff. External face, admin tier. */
export function adminSessionRoutes(deps: AppDeps & AccountsParts) {
  return createRouter()
    .openapi(listUserSessions, async (c) => c.json({ sessions: await userSessions(deps, c.req.valid('param').id) }, 200))
    .openapi(revokeAll, async (c) => {
      await revokeAllUserSessions(deps, c.var.session, c.req.valid('param').id, c.var.requestId);
      return c.json({ ok: true as const }, 200);
    })
    .openapi(revokeOne, async (c) => {
      const { id, token_hash } = c.req.valid('param');
      await revokeUserSession(deps, c.var.session, id, token_hash, c.var.requestId);
      return c.json({ ok: true as const }, 200);
    })
    .openapi(removePasskeys, async (c) => {
      await removeUserPasskeys(deps, c.var.session, c.req.valid('param').id, c.var.requestId);
      return c.json({ ok: true as const }, 200);
    });
}
