import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { linkIdentity, unlinkIdentity } from './admin-service.js';
import { McUuidSchema, UserIdParam } from './schema.js';
import type { AccountsParts } from './parts.js';
import type { AppDeps } from '../../http/env.js';

const admin = { tier: 'admin' } as const;
const AuthSource = z.enum(['primary', 'thirdparty']);
/** The original panel sends `mojang` by default; a configured source tag is accepted too. */
const NamedAuthSource = z.string().min(1).max(64).openapi({ example: 'mojang' });

const link = defineRoute(admin, {
  method: 'post',
  path: '/api/v1/users/{id}/links',
  summary: 'Link a game identity to an account by hand (owner only)',
  request: { params: UserIdParam, ...jsonBody(z.strictObject({ mc_uuid: McUuidSchema, auth_source: NamedAuthSource })) },
  responses: {
    200: json(z.object({ ok: z.literal(true), mc_uuid: z.string(), auth_source: AuthSource }), 'linked, or linked to this account already (no change)'),
    400: errorAnswer('bad_request: auth_source is not primary, thirdparty, mojang or a configured source tag'),
    403: errorAnswer('forbidden: only an owner links identities'),
    404: errorAnswer('no such user'),
    409: errorAnswer('conflict: the identity is linked to an account already'),
  },
});

const unlink = defineRoute(admin, {
  method: 'delete',
  path: '/api/v1/users/{id}/links/{mc_uuid}',
  summary: 'Unlink a game identity from an account (owner only)',
  request: { params: UserIdParam.extend({ mc_uuid: McUuidSchema.openapi({ param: { name: 'mc_uuid', in: 'path' } }) }) },
  responses: {
    200: json(z.object({ ok: z.literal(true), mc_uuid: z.string() }), 'unlinked'),
    403: errorAnswer('forbidden: only an owner unlinks identities'),
    404: errorAnswer('no such user, or the identity is not linked to it'),
  },
});

/** Game identities of an account, by hand. External face, admin tier, owner only. */
export function adminLinkRoutes(deps: AppDeps & AccountsParts) {
  return createRouter()
    .openapi(link, async (c) => {
      const { mc_uuid, auth_source } = c.req.valid('json');
      const kind = await linkIdentity(deps, c.var.session, c.req.valid('param').id, { mcUuid: mc_uuid, authSource: auth_source }, c.var.requestId);
      return c.json({ ok: true as const, mc_uuid, auth_source: kind }, 200);
    })
    .openapi(unlink, async (c) => {
      const { id, mc_uuid } = c.req.valid('param');
      await unlinkIdentity(deps, c.var.session, id, mc_uuid, c.var.requestId);
      return c.json({ ok: true as const, mc_uuid }, 200);
    });
}
