import type { Context } from 'hono';
import type { Transaction } from '../../db/client.js';
import type { AppEnv, SignedInEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json } from '../../http/route.js';
import { isStaffRole } from './authenticator.js';
import { assertMayManage, liveUserOr404 } from './admin-service.js';
import { writeAudit } from '../audit/index.js';
import { OkSchema, RevokedSchema, SessionListSchema, TokenHashParam, UserIdParam } from './schema.js';
import { listLiveSessions, revokeSession, revokeUserSessions } from './session-service.js';
import { findUserById } from './users-service.js';
import { toSessionView } from './views.js';

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
  responses: { 200: json(RevokedSchema, 'revoked'), 404: errorAnswer('session_not_found, or no such user') },
});

const removePasskeys = defineRoute(admin, {
  method: 'delete',
  path: '/api/v1/users/{id}/passkeys',
  summary: "Remove every passkey of a user (a lost authenticator); their sessions stay",
  request: { params: UserIdParam },
  responses: { 200: json(OkSchema, 'removed'), 403: errorAnswer('forbidden: only an owner manages staff'), 404: errorAnswer('no such user') },
});

/** A user's sessions and passkeys, for staff. External face, admin tier. */
export function adminSessionRoutes() {
  return createRouter()
    .openapi(listUserSessions, async (c) => {
      const { deps } = c.var;
      const target = await liveUserOr404(deps.database.db, c.req.valid('param').id);
      const rows = await listLiveSessions(deps.database.db, target.id, isStaffRole(target.role), deps.clock.now());
      return c.json({ sessions: rows.map((r) => toSessionView(r)) }, 200);
    })
    .openapi(revokeAll, async (c) => {
      await changeUserAccess(c, c.req.valid('param').id, 'session.revoke_all', async (tx, id, now) => ({
        sessions_revoked: await revokeUserSessions(tx, id, now),
      }));
      return c.json({ ok: true as const }, 200);
    })
    .openapi(revokeOne, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session;
      const { id, token_hash } = c.req.valid('param');
      const now = deps.clock.now();
      const revoked = await deps.database.db.transaction(async (tx) => {
        const target = await findUserById(tx, id);
        if (!target) return false;
        if (target.id !== actor.userId) assertMayManage(actor, target);
        if (!(await revokeSession(tx, token_hash, now, id))) return false;
        await writeAudit(tx, { at: now, actor: actor.userId, action: 'session.revoke', target: id, detail: { token_hash }, requestId: c.var.requestId });
        return true;
      });
      if (!revoked) throw new DomainError('session_not_found', 'No such live session of this user.');
      return c.json({ revoked: true as const }, 200);
    })
    .openapi(removePasskeys, async (c) => {
      const { passkeys } = c.var.deps;
      await changeUserAccess(c, c.req.valid('param').id, 'passkey.remove_all', async (tx, id) => ({
        removed: passkeys ? await passkeys.removeAll(tx, id) : 0,
      }));
      return c.json({ ok: true as const }, 200);
    });
}

/**
 * A staff change to the ways into a live account, in one transaction with its audit row: 404 for
 * an unknown or deleted user, 403 unless the actor may manage them (anyone may act on themselves).
 */
async function changeUserAccess(
  c: Context<SignedInEnv>,
  id: string,
  action: string,
  change: (tx: Transaction, id: string, now: Date) => Promise<Record<string, unknown>>,
): Promise<void> {
  const { deps } = c.var;
  const actor = c.var.session;
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    const target = await liveUserOr404(tx, id);
    if (target.id !== actor.userId) assertMayManage(actor, target);
    const detail = await change(tx, id, now);
    await writeAudit(tx, { at: now, actor: actor.userId, action, target: id, detail, requestId: c.var.requestId });
  });
}
