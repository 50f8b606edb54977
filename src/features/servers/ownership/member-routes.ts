import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../../http/route.js';
import type { AppDeps } from '../../../http/env.js';
import { MEMBER_PERMISSIONS } from '../core/index.js';
import type { ServersParts } from '../core/index.js';
import { addMember, listMembers, removeMember, updateMember, type MemberRow } from './members.js';
import { ServerNameParam } from '../core/index.js';

const Permissions = z.array(z.enum(MEMBER_PERMISSIONS)).max(MEMBER_PERMISSIONS.length * 2);

const MemberView = z
  .object({
    user_id: z.uuid(),
    username: z.string().optional(),
    email: z.string().optional(),
    permissions: z.array(z.enum(MEMBER_PERMISSIONS)),
    added_at: z.iso.datetime({ offset: true }),
    added_by: z.uuid(),
  })
  .openapi('ServerMember');

const MemberParam = ServerNameParam.extend({ user_id: z.uuid().openapi({ param: { name: 'user_id', in: 'path' } }) });

const viewOf = (row: MemberRow) => ({
  user_id: row.userId,
  ...(row.username !== undefined ? { username: row.username } : {}),
  ...(row.email !== undefined ? { email: row.email } : {}),
  permissions: row.permissions,
  added_at: row.addedAt.toISOString(),
  added_by: row.addedBy,
});

const list = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/servers/{name}/members',
  summary: 'The accounts the owner shares the server with, and their permissions (owner or staff)',
  request: { params: ServerNameParam },
  responses: {
    200: json(z.object({ members: z.array(MemberView) }).openapi('ServerMembers'), 'the members, oldest first'),
    403: errorAnswer('forbidden: not the owner or staff (a member too)'),
    404: errorAnswer('no such server'),
    409: errorAnswer('conflict: the server has no owner'),
  },
});

const add = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/members',
  summary: 'Share the server with an account named by username or e-mail, with permissions (owner or staff, with a fresh proof)',
  request: {
    params: ServerNameParam,
    ...jsonBody(z.strictObject({ user: z.string().trim().min(1).max(320), permissions: Permissions }).openapi('AddServerMember')),
  },
  responses: {
    201: json(MemberView, 'the new member'),
    400: errorAnswer('bad_request: an unknown permission, or the owner named as a member'),
    403: errorAnswer('forbidden, or reauth_required'),
    404: errorAnswer('no such server, or user_not_found'),
    409: errorAnswer('already_member, or conflict: the server has no owner'),
  },
});

const update = defineRoute({ tier: 'app' }, {
  method: 'put',
  path: '/api/v1/servers/{name}/members/{user_id}',
  summary: "Change a member's permissions (owner or staff)",
  request: { params: MemberParam, ...jsonBody(z.strictObject({ permissions: Permissions }).openapi('ServerMemberPermissions')) },
  responses: {
    200: json(MemberView, 'the member'),
    400: errorAnswer('bad_request: an unknown permission'),
    403: errorAnswer('forbidden'),
    404: errorAnswer('not_found: no such server or member'),
  },
});

const remove = defineRoute({ tier: 'app' }, {
  method: 'delete',
  path: '/api/v1/servers/{name}/members/{user_id}',
  summary: 'Remove a member (owner or staff), or leave (the member itself); it is refused at once, an open console stream included',
  request: { params: MemberParam },
  responses: {
    204: { description: 'removed' },
    403: errorAnswer('forbidden'),
    404: errorAnswer('not_found: no such server or member'),
  },
});

/** A server's members (issue 42). External face, app tier. */
export function memberRoutes(deps: AppDeps & ServersParts) {
  return createRouter()
    .openapi(list, async (c) => c.json({ members: (await listMembers(deps, c.req.valid('param').name, c.var.session)).map(viewOf) }, 200))
    .openapi(add, async (c) => {
      const row = await addMember(deps, c.req.valid('param').name, { session: c.var.session, requestId: c.var.requestId }, c.req.valid('json'));
      return c.json(viewOf(row), 201);
    })
    .openapi(update, async (c) => {
      const { name, user_id } = c.req.valid('param');
      return c.json(viewOf(await updateMember(deps, name, { session: c.var.session, requestId: c.var.requestId }, user_id, c.req.valid('json'))), 200);
    })
    .openapi(remove, async (c) => {
      const { name, user_id } = c.req.valid('param');
      await removeMember(deps, name, { session: c.var.session, requestId: c.var.requestId }, user_id);
      return c.body(null, 204);
    });
}
