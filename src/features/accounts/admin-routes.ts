import { z } from '@hono/zod-openapi';
import { asc, eq, isNull } from 'drizzle-orm';
import { userQuotas, users } from '../../db/schema/accounts.js';
import { ApiError } from '../../http/errors.js';
import { createRouter, defineRoute } from '../../http/route.js';
import { isStaffRole } from './authenticator.js';
import { assertMayManage, assertNotLastOwner, liveUserOr404, serverCountsOf, userDetail, userView } from './admin-service.js';
import { writeAudit } from './audit.js';
import { getQuota } from './directory.js';
import {
  EmailSchema,
  QuotaViewSchema,
  RevokedSchema,
  RoleSchema,
  SessionListSchema,
  TokenHashParam,
  UserDetailSchema,
  UserIdParam,
  UsernameSchema,
  UserViewSchema,
} from './schema.js';
import { listLiveSessions, revokeSession, revokeUserSessions } from './session-service.js';
import { findUserById, uniqueViolation } from './users-service.js';
import { toSessionView, toUserView } from './views.js';
import { errorAnswer, json, jsonBody } from '../../http/route.js';

const admin = { tier: 'admin' } as const;

const listUsers = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/users',
  summary: 'Every account that is not deleted, oldest first',
  responses: { 200: json(z.object({ users: z.array(UserViewSchema) }), 'users') },
});

const createUserRoute = defineRoute(admin, {
  method: 'post',
  path: '/api/v1/users',
  summary: 'Create an account (an e-mail set here is unverified until its holder types back a code)',
  request: jsonBody(z.strictObject({ username: UsernameSchema, email: EmailSchema.optional(), role: RoleSchema })),
  responses: {
    201: json(UserViewSchema, 'created'),
    403: errorAnswer('forbidden: only an owner creates staff'),
    409: errorAnswer('conflict: username or e-mail taken'),
  },
});

const getUser = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/users/{id}',
  summary: 'One account, deleted ones included',
  request: { params: UserIdParam },
  responses: { 200: json(UserDetailSchema, 'user'), 404: errorAnswer('no such user') },
});

const patchUser = defineRoute(admin, {
  method: 'patch',
  path: '/api/v1/users/{id}',
  summary: 'Change the role or the disabled flag (disabling revokes every session)',
  request: {
    params: UserIdParam,
    ...jsonBody(
      z
        .strictObject({ role: RoleSchema.optional(), disabled: z.boolean().optional() })
        .refine((b) => b.role !== undefined || b.disabled !== undefined, 'give role or disabled'),
    ),
  },
  responses: {
    200: json(UserViewSchema, 'changed'),
    403: errorAnswer('forbidden: only an owner manages staff'),
    404: errorAnswer('no such user'),
    409: errorAnswer('protected_admin: the last owner'),
  },
});

const deleteUser = defineRoute(admin, {
  method: 'delete',
  path: '/api/v1/users/{id}',
  summary: 'Soft-delete an account and revoke its sessions',
  request: { params: UserIdParam },
  responses: {
    200: json(UserDetailSchema, 'deleted'),
    403: errorAnswer('forbidden: only an owner manages staff'),
    404: errorAnswer('no such user'),
    409: errorAnswer('protected_admin: the last owner'),
  },
});

const getQuotaRoute = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/users/{id}/quota',
  summary: "A user's quota (null: unlimited)",
  request: { params: UserIdParam },
  responses: { 200: json(QuotaViewSchema, 'quota'), 404: errorAnswer('no such user') },
});

const Limit = z.number().int().min(0).max(2_147_483_647).nullable().optional();
const putQuota = defineRoute(admin, {
  method: 'put',
  path: '/api/v1/users/{id}/quota',
  summary: "Replace a user's quota; an absent or null limit is unlimited",
  request: {
    params: UserIdParam,
    ...jsonBody(
      z.strictObject({
        user_id: z.uuid().optional(),
        max_servers: Limit,
        max_cpu_milli: Limit,
        max_memory_mb: Limit,
        max_storage_gb: Limit,
      }),
    ),
  },
  responses: { 200: json(QuotaViewSchema, 'stored quota'), 404: errorAnswer('no such user') },
});

const listUserSessions = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/users/{id}/sessions',
  summary: "A user's live sessions, newest first",
  request: { params: UserIdParam },
  responses: { 200: json(SessionListSchema, 'sessions'), 404: errorAnswer('no such user') },
});

const revokeUserSession = defineRoute(admin, {
  method: 'delete',
  path: '/api/v1/users/{id}/sessions/{token_hash}',
  summary: "Revoke one of a user's sessions",
  request: { params: UserIdParam.extend(TokenHashParam.shape) },
  responses: { 200: json(RevokedSchema, 'revoked'), 404: errorAnswer('no such live session of this user') },
});

/** Staff tools: users, quotas, sessions. External face, admin tier. */
export function adminAccountRoutes() {
  return createRouter()
    .openapi(listUsers, async (c) => {
      const { deps } = c.var;
      const db = deps.database.db;
      const rows = await db.select().from(users).where(isNull(users.deletedAt)).orderBy(asc(users.createdAt), asc(users.id));
      const counts = await serverCountsOf(deps, db, rows.map((r) => r.id));
      return c.json({ users: rows.map((r) => toUserView(r, counts.get(r.id) ?? 0)) }, 200);
    })
    .openapi(createUserRoute, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session!;
      const body = c.req.valid('json');
      assertMayManage(actor, { role: 'user' }, body.role);
      const now = deps.clock.now();
      try {
        const row = await deps.database.db.transaction(async (tx) => {
          const [created] = await tx
            .insert(users)
            .values({ username: body.username, email: body.email?.toLowerCase() ?? null, role: body.role, createdAt: now, updatedAt: now })
            .returning();
          await writeAudit(tx, {
            at: now,
            actor: actor.userId,
            action: 'user.create',
            target: created!.id,
            detail: { role: body.role },
            requestId: c.var.requestId,
          });
          return created!;
        });
        return c.json(await userView(deps, deps.database.db, row), 201);
      } catch (err) {
        if (uniqueViolation(err) !== undefined) throw new ApiError('conflict', 'That username or e-mail address is taken.');
        throw err;
      }
    })
    .openapi(getUser, async (c) => {
      const { deps } = c.var;
      const row = await findUserById(deps.database.db, c.req.valid('param').id);
      if (!row) throw new ApiError('not_found', 'No such user.');
      return c.json(await userDetail(deps, deps.database.db, row), 200);
    })
    .openapi(patchUser, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session!;
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      const now = deps.clock.now();
      const row = await deps.database.db.transaction(async (tx) => {
        const target = await liveUserOr404(tx, id);
        assertMayManage(actor, target, body.role);
        const demotes = body.role !== undefined && body.role !== 'owner';
        if (demotes || body.disabled === true) await assertNotLastOwner(tx, target);
        const [updated] = await tx
          .update(users)
          .set({ ...(body.role !== undefined ? { role: body.role } : {}), ...(body.disabled !== undefined ? { disabled: body.disabled } : {}), updatedAt: now })
          .where(eq(users.id, id))
          .returning();
        if (body.role !== undefined && body.role !== target.role) {
          await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.role', target: id, detail: { from: target.role, to: body.role }, requestId: c.var.requestId });
        }
        if (body.disabled !== undefined && body.disabled !== target.disabled) {
          const revoked = body.disabled ? await revokeUserSessions(tx, id, now) : 0;
          await writeAudit(tx, {
            at: now,
            actor: actor.userId,
            action: body.disabled ? 'user.disable' : 'user.enable',
            target: id,
            detail: body.disabled ? { sessions_revoked: revoked } : undefined,
            requestId: c.var.requestId,
          });
        }
        return updated!;
      });
      return c.json(await userView(deps, deps.database.db, row), 200);
    })
    .openapi(deleteUser, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session!;
      const { id } = c.req.valid('param');
      const now = deps.clock.now();
      const row = await deps.database.db.transaction(async (tx) => {
        const target = await liveUserOr404(tx, id);
        assertMayManage(actor, target);
        await assertNotLastOwner(tx, target);
        const [deleted] = await tx.update(users).set({ deletedAt: now, updatedAt: now }).where(eq(users.id, id)).returning();
        const revoked = await revokeUserSessions(tx, id, now);
        await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.delete', target: id, detail: { sessions_revoked: revoked }, requestId: c.var.requestId });
        return deleted!;
      });
      return c.json(await userDetail(deps, deps.database.db, row), 200);
    })
    .openapi(getQuotaRoute, async (c) => {
      const { deps } = c.var;
      const { id } = c.req.valid('param');
      await liveUserOr404(deps.database.db, id);
      return c.json(await getQuota(deps.database.db, id), 200);
    })
    .openapi(putQuota, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session!;
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      if (body.user_id !== undefined && body.user_id !== id) throw new ApiError('bad_request', 'user_id differs from the path.');
      const limits = {
        maxServers: body.max_servers ?? null,
        maxCpuMilli: body.max_cpu_milli ?? null,
        maxMemoryMb: body.max_memory_mb ?? null,
        maxStorageGb: body.max_storage_gb ?? null,
      };
      const now = deps.clock.now();
      await deps.database.db.transaction(async (tx) => {
        await liveUserOr404(tx, id);
        await tx.insert(userQuotas).values({ userId: id, ...limits }).onConflictDoUpdate({ target: userQuotas.userId, set: limits });
        await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.quota', target: id, detail: { ...limits }, requestId: c.var.requestId });
      });
      return c.json(await getQuota(deps.database.db, id), 200);
    })
    .openapi(listUserSessions, async (c) => {
      const { deps } = c.var;
      const target = await liveUserOr404(deps.database.db, c.req.valid('param').id);
      const rows = await listLiveSessions(deps.database.db, target.id, isStaffRole(target.role), deps.clock.now());
      return c.json({ sessions: rows.map((r) => toSessionView(r)) }, 200);
    })
    .openapi(revokeUserSession, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session!;
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
      if (!revoked) throw new ApiError('not_found', 'No such live session of this user.');
      return c.json({ revoked: true as const }, 200);
    });
}
