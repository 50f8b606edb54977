import { z } from '@hono/zod-openapi';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { getCookie } from 'hono/cookie';
import { users } from '../../db/schema/accounts.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { sha256Hex } from '../../lib/secrets.js';
import { writeAudit } from '../audit/index.js';
import { clearSessionCookie, revokeSession, revokeUserSessions, SESSION_COOKIE, startSession } from '../accounts/session-service.js';
import { findUserById } from '../accounts/users-service.js';
import { signInRole } from '../accounts/views.js';
import { requireReauth } from '../reauth/service.js';
import { refusePlayerOnConsole, requireLocalAuth } from './guards.js';
import { DUMMY_PASSWORD_HASH, hashPassword, passwordBytes, PASSWORD_MAX_BYTES, PASSWORD_MIN_BYTES, verifyPassword } from './password.js';
import { throttledHashing } from './hash-limit.js';
import { doorLimit } from './rate-limit.js';
import { limited, SignedInSchema } from './schema.js';

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

const changePassword = defineRoute(
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
export function passwordRoutes() {
  return createRouter()
    .openapi(login, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const { username, password } = c.req.valid('json');
      const [user] = await deps.database.db
        .select()
        .from(users)
        .where(and(sql`lower(${users.username}) = ${username.toLowerCase()}`, isNull(users.deletedAt)))
        .limit(1);
      // Unknown users and users without a password are checked against a dummy hash: same time.
      const matches = await throttledHashing(c, `name:${username.toLowerCase()}`, () =>
        verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH),
      );
      if (!user || !user.passwordHash || !matches) throw new DomainError('invalid_credentials', 'Wrong username or password.');
      if (user.disabled) throw new DomainError('account_disabled', 'This account is disabled.');
      refusePlayerOnConsole(c, user.role);
      await startSession(c, deps.database.db, user.id, 'password');
      return c.json({ user_id: user.id, role: signInRole(user.role), must_change_password: user.mustChangePassword }, 200);
    })
    .openapi(logout, async (c) => {
      const { deps } = c.var;
      const token = getCookie(c, SESSION_COOKIE);
      if (token && token.length <= 128) await revokeSession(deps.database.db, sha256Hex(token), deps.clock.now());
      clearSessionCookie(c);
      return c.json({ ok: true as const }, 200);
    })
    .openapi(changePassword, async (c) => {
      requireLocalAuth(c);
      await requireReauth(c);
      const { deps } = c.var;
      const session = c.var.session;
      const body = c.req.valid('json');
      const size = passwordBytes(body.new_password);
      if (size < PASSWORD_MIN_BYTES || size > PASSWORD_MAX_BYTES) {
        throw new DomainError('bad_request', `The new password must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes.`);
      }
      if (body.new_password.normalize('NFC') === body.current_password.normalize('NFC')) {
        throw new DomainError('bad_request', 'The new password must differ from the current one.');
      }
      const user = await findUserById(deps.database.db, session.userId);
      // One gate slot for both runs: the check of the current password and the new hash.
      const hash = await throttledHashing(c, `user:${session.userId}`, async () => {
        const matches = await verifyPassword(body.current_password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
        return user?.passwordHash && matches ? hashPassword(body.new_password) : undefined;
      });
      if (!user || !hash) throw new DomainError('invalid_credentials', 'The current password is wrong.');
      const now = deps.clock.now();
      await deps.database.db.transaction(async (tx) => {
        await tx.update(users).set({ passwordHash: hash, mustChangePassword: false, updatedAt: now }).where(eq(users.id, user.id));
        const revoked = await revokeUserSessions(tx, user.id, now, session.tokenHash);
        await writeAudit(tx, {
          at: now,
          actor: user.id,
          action: 'password.change',
          target: user.id,
          detail: { sessions_revoked: revoked },
          requestId: c.var.requestId,
        });
      });
      return c.json({ ok: true as const }, 200);
    });
}
