import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { adminLinkRoutes } from './admin-link-routes.js';
import { adminQuotaRoutes } from './admin-quota-routes.js';
import { adminSessionRoutes } from './admin-session-routes.js';
import { createUser, deleteUser, listUsers, setUserDisabled, updateUser, userDetail } from './admin-service.js';
import { EmailSchema, RoleSchema, UserDetailSchema, UserIdParam, UsernameSchema, UserViewSchema } from './schema.js';
import type { AccountsParts } from './parts.js';
import type { AppDeps } from '../../http/env.js';

const admin = { tier: 'admin' } as const;

const USER_PAGE = { default: 50, max: 200 } as const;

const ListQuery = z.strictObject({
  query: z.string().max(254).optional().openapi({ param: { name: 'query', in: 'query' }, description: 'part of the username or e-mail, any case' }),
  role: RoleSchema.optional().openapi({ param: { name: 'role', in: 'query' } }),
  disabled: z.enum(['true', 'false']).optional().openapi({ param: { name: 'disabled', in: 'query' } }),
  limit: z.coerce.number().int().min(1).max(USER_PAGE.max).optional().openapi({ param: { name: 'limit', in: 'query' } }),
  offset: z.coerce.number().int().min(0).max(2_147_483_647).optional().openapi({ param: { name: 'offset', in: 'query' } }),
});

const listUsersRoute = defineRoute(admin, {
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

const deleteUserRoute = defineRoute(admin, {
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

/** Staff tools: users and, through the smaller tables, quotas, sessions, passkeys and links. External face, admin tier. */
export function adminAccountRoutes(deps: AppDeps & AccountsParts) {
  return createRouter()
    .openapi(listUsersRoute, async (c) => {
      const q = c.req.valid('query');
      const disabled = q.disabled === undefined ? undefined : q.disabled === 'true';
      const page = await listUsers(deps, { query: q.query, role: q.role, disabled, limit: q.limit ?? USER_PAGE.default, offset: q.offset ?? 0 });
      return c.json(page, 200);
    })
    .openapi(createUserRoute, async (c) => c.json(await createUser(deps, c.var.session, c.req.valid('json'), c.var.requestId), 201))
    .openapi(getUser, async (c) => c.json(await userDetail(deps, c.req.valid('param').id), 200))
    .openapi(patchUser, async (c) => c.json(await updateUser(deps, c.var.session, c.req.valid('param').id, c.req.valid('json'), c.var.requestId), 200))
    .openapi(disableUser, async (c) => {
      const { id } = c.req.valid('param');
      const { disabled } = c.req.valid('json');
      await setUserDisabled(deps, c.var.session, id, disabled, c.var.requestId);
      return c.json({ id, disabled }, 200);
    })
    .openapi(deleteUserRoute, async (c) => {
      await deleteUser(deps, c.var.session, c.req.valid('param').id, c.var.requestId);
      return c.json({ deleted: true as const }, 200);
    })
    .include(adminQuotaRoutes(deps))
    .include(adminSessionRoutes(deps))
    .include(adminLinkRoutes(deps));
}
