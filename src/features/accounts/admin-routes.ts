import { z } from '@hono/zod-openapi';
import { containsPattern } from '../../db/like.js';
import { and, asc, count, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { users } from '../../db/schema/accounts.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { adminLinkRoutes } from './admin-link-routes.js';
import { adminQuotaRoutes } from './admin-quota-routes.js';
import { adminSessionRoutes } from './admin-session-routes.js';
import { assertMayManage, assertNotLastOwner, liveUserOr404, serverCountsOf, userDetail, userView } from './admin-service.js';
import { writeAudit } from '../audit/index.js';
import { EmailSchema, RoleSchema, UserDetailSchema, UserIdParam, UsernameSchema, UserViewSchema } from './schema.js';
import { revokeUserSessions } from './session-service.js';
import { findUserById, uniqueViolation } from './users-service.js';
import { toUserView } from './views.js';

const admin = { tier: 'admin' } as const;

export const USER_PAGE = { default: 50, max: 200 } as const;

const ListQuery = z.strictObject({
  query: z.string().max(254).optional().openapi({ param: { name: 'query', in: 'query' }, description: 'part of the username or e-mail, any case' }),
  role: RoleSchema.optional().openapi({ param: { name: 'role', in: 'query' } }),
  disabled: z.enum(['true', 'false']).optional().openapi({ param: { name: 'disabled', in: 'query' } }),
  limit: z.coerce.number().int().min(1).max(USER_PAGE.max).optional().openapi({ param: { name: 'limit', in: 'query' } }),
  offset: z.coerce.number().int().min(0).max(2_147_483_647).optional().openapi({ param: { name: 'offset', in: 'query' } }),
});

const listUsers = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/users',
  summary: 'Accounts that are not deleted, oldest first, filtered and paged; `total` counts every match',
  request: { query: ListQuery },
  responses: { 200: json(z.object({ users: z.array(UserViewSchema), total: z.number().int() }), 'one page of users') },
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

const PatchBody = z
  .strictObject({ username: UsernameSchema.optional(), email: EmailSchema.nullable().optional(), role: RoleSchema.optional() })
  .refine((b) => b.username !== undefined || b.email !== undefined || b.role !== undefined, 'give username, email or role');

const patchUser = defineRoute(admin, {
  method: 'patch',
  path: '/api/v1/users/{id}',
  summary: 'Rename, change the e-mail address (a new one is unverified; null removes it) or the role',
  request: { params: UserIdParam, ...jsonBody(PatchBody) },
  responses: {
    200: json(UserViewSchema, 'changed'),
    403: errorAnswer('forbidden: only an owner manages staff'),
    404: errorAnswer('no such user'),
    409: errorAnswer('protected_admin (the last owner), or conflict (username or e-mail taken)'),
  },
});

const disableUser = defineRoute(admin, {
  method: 'post',
  path: '/api/v1/users/{id}/disable',
  summary: 'Disable (every session is revoked) or enable an account',
  request: { params: UserIdParam, ...jsonBody(z.strictObject({ disabled: z.boolean() })) },
  responses: {
    200: json(z.object({ id: z.uuid(), disabled: z.boolean() }), 'the flag in force'),
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
    200: json(z.object({ deleted: z.literal(true) }), 'deleted'),
    403: errorAnswer('forbidden: only an owner manages staff'),
    404: errorAnswer('no such user'),
    409: errorAnswer('protected_admin: the last owner'),
  },
});

/** `%` and `_` typed by the admin are matched literally. */

function listFilter(q: z.infer<typeof ListQuery>): SQL | undefined {
  const text = q.query?.trim();
  return and(
    isNull(users.deletedAt),
    text ? sql`(${users.username} ilike ${containsPattern(text)} or coalesce(${users.email}, '') ilike ${containsPattern(text)})` : undefined,
    q.role ? eq(users.role, q.role) : undefined,
    q.disabled ? eq(users.disabled, q.disabled === 'true') : undefined,
  );
}

const takenConflict = () => new DomainError('conflict', 'That username or e-mail address is taken.');

/** Staff tools: users and, through the smaller tables, quotas, sessions, passkeys and links. External face, admin tier. */
export function adminAccountRoutes() {
  return createRouter()
    .openapi(listUsers, async (c) => {
      const { deps } = c.var;
      const db = deps.database.db;
      const q = c.req.valid('query');
      const where = listFilter(q);
      const [rows, [total]] = await Promise.all([
        db
          .select()
          .from(users)
          .where(where)
          .orderBy(asc(users.createdAt), asc(users.id))
          .limit(q.limit ?? USER_PAGE.default)
          .offset(q.offset ?? 0),
        db.select({ n: count() }).from(users).where(where),
      ]);
      const counts = await serverCountsOf(deps, db, rows.map((r) => r.id));
      return c.json({ users: rows.map((r) => toUserView(r, counts.get(r.id) ?? 0)), total: Number(total?.n ?? 0) }, 200);
    })
    .openapi(createUserRoute, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session;
      const body = c.req.valid('json');
      assertMayManage(actor, { role: 'user' }, body.role);
      const now = deps.clock.now();
      try {
        const row = await deps.database.db.transaction(async (tx) => {
          const [created] = await tx
            .insert(users)
            .values({ username: body.username, email: body.email?.toLowerCase() ?? null, role: body.role, createdAt: now, updatedAt: now })
            .returning();
          await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.create', target: created!.id, detail: { role: body.role }, requestId: c.var.requestId });
          return created!;
        });
        return c.json(await userView(deps, deps.database.db, row), 201);
      } catch (err) {
        if (uniqueViolation(err) !== undefined) throw takenConflict();
        throw err;
      }
    })
    .openapi(getUser, async (c) => {
      const { deps } = c.var;
      const row = await findUserById(deps.database.db, c.req.valid('param').id);
      if (!row) throw new DomainError('not_found', 'No such user.');
      return c.json(await userDetail(deps, deps.database.db, row), 200);
    })
    .openapi(patchUser, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session;
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      const now = deps.clock.now();
      try {
        const row = await deps.database.db.transaction(async (tx) => {
          const target = await liveUserOr404(tx, id);
          assertMayManage(actor, target, body.role);
          if (body.role !== undefined && body.role !== 'owner') await assertNotLastOwner(tx, target);
          const email = body.email === undefined ? undefined : (body.email?.toLowerCase() ?? null);
          const emailChanged = email !== undefined && email !== target.email?.toLowerCase();
          const [updated] = await tx
            .update(users)
            .set({
              ...(body.username !== undefined ? { username: body.username } : {}),
              ...(body.role !== undefined ? { role: body.role } : {}),
              // An address typed by staff is unverified until its holder types back a code.
              ...(emailChanged ? { email, emailVerified: false } : {}),
              updatedAt: now,
            })
            .where(eq(users.id, id))
            .returning();
          const changes = {
            ...(body.username !== undefined && body.username !== target.username ? { username: { from: target.username, to: body.username } } : {}),
            ...(body.role !== undefined && body.role !== target.role ? { role: { from: target.role, to: body.role } } : {}),
            ...(emailChanged ? { email: { from: target.email, to: email } } : {}),
          };
          if (Object.keys(changes).length > 0) {
            await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.update', target: id, detail: changes, requestId: c.var.requestId });
          }
          return updated!;
        });
        return c.json(await userView(deps, deps.database.db, row), 200);
      } catch (err) {
        if (uniqueViolation(err) !== undefined) throw takenConflict();
        throw err;
      }
    })
    .openapi(disableUser, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session;
      const { id } = c.req.valid('param');
      const { disabled } = c.req.valid('json');
      const now = deps.clock.now();
      await deps.database.db.transaction(async (tx) => {
        const target = await liveUserOr404(tx, id);
        assertMayManage(actor, target);
        if (disabled) await assertNotLastOwner(tx, target);
        if (target.disabled === disabled) return;
        await tx.update(users).set({ disabled, updatedAt: now }).where(eq(users.id, id));
        const revoked = disabled ? await revokeUserSessions(tx, id, now) : 0;
        await writeAudit(tx, {
          at: now,
          actor: actor.userId,
          action: disabled ? 'user.disable' : 'user.enable',
          target: id,
          detail: disabled ? { sessions_revoked: revoked } : undefined,
          requestId: c.var.requestId,
        });
      });
      return c.json({ id, disabled }, 200);
    })
    .openapi(deleteUser, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session;
      const { id } = c.req.valid('param');
      const now = deps.clock.now();
      await deps.database.db.transaction(async (tx) => {
        const target = await liveUserOr404(tx, id);
        assertMayManage(actor, target);
        await assertNotLastOwner(tx, target);
        await tx.update(users).set({ deletedAt: now, updatedAt: now }).where(eq(users.id, id));
        const revoked = await revokeUserSessions(tx, id, now);
        await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.delete', target: id, detail: { sessions_revoked: revoked }, requestId: c.var.requestId });
      });
      return c.json({ deleted: true as const }, 200);
    })
    .include(adminQuotaRoutes())
    .include(adminSessionRoutes())
    .include(adminLinkRoutes());
}
