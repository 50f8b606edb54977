import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../../http/route.js';
import { McUuidSchema } from '../../accounts/index.js';
import { setWakeAllowed, wakeAllowlist } from './allowlist.js';
import { ServerNameParam } from '../core/index.js';
import type { ServersParts } from '../core/index.js';
import type { AppDeps } from '../../../http/env.js';

const AllowlistEntry = z.object({ mc_uuid: z.string(), can_wake: z.boolean(), added_at: z.iso.datetime({ offset: true }) });

const list = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/servers/{name}/allowlist',
  summary: 'Players who may wake the server under the `allowlist` autostart policy (owner or staff)',
  request: { params: ServerNameParam },
  responses: {
    200: json(z.object({ server: z.string(), entries: z.array(AllowlistEntry) }).openapi('WakeAllowlist'), 'the list'),
    403: errorAnswer('not the owner'),
    404: errorAnswer('no such server'),
  },
});

const put = defineRoute({ tier: 'app' }, {
  method: 'put',
  path: '/api/v1/servers/{name}/allowlist/{uuid}',
  summary: 'Let a player wake the server, or take it back (`can_wake: false` keeps the entry, so a later join does not give it back)',
  request: {
    params: ServerNameParam.extend({ uuid: McUuidSchema.openapi({ param: { name: 'uuid', in: 'path' } }) }),
    ...jsonBody(z.strictObject({ can_wake: z.boolean() })),
  },
  responses: { 204: { description: 'stored' }, 403: errorAnswer('not the owner'), 404: errorAnswer('no such server') },
});

/** The wake allowlist of a server. External face, owner or staff. */
export function allowlistRoutes(deps: AppDeps & ServersParts) {
  return createRouter()
    .openapi(list, async (c) => {
      const { name } = c.req.valid('param');
      const rows = await wakeAllowlist(deps, name, c.var.session);
      const entries = rows.map((r) => ({ mc_uuid: r.mcUuid, can_wake: r.canWake, added_at: r.addedAt.toISOString() }));
      return c.json({ server: name, entries }, 200);
    })
    .openapi(put, async (c) => {
      const { name, uuid } = c.req.valid('param');
      await setWakeAllowed(deps, name, c.var.session, uuid, c.req.valid('json').can_wake);
      return c.body(null, 204);
    });
}
