import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { cancelRetirement, requestRetirement, retiringView } from './retirement.js';
import { RetiringSchema as RetiringView, ServerNameParam } from './core/index.js';
import type { ServersParts } from './core/index.js';
import type { AppDeps } from '../../http/env.js';

const RetiringSchema = z.object({ name: z.string(), retiring: RetiringView }).openapi('Retirement');

const request = defineRoute({ tier: 'app' }, {
  method: 'put',
  path: '/api/v1/servers/{name}/retirement',
  summary: 'Retire a server: it is stopped, then released (or deleted with `delete`) by the background sweep',
  request: {
    params: ServerNameParam,
    ...jsonBody(z.strictObject({ confirm: z.string().max(255).openapi({ description: "the server's name, typed again" }), delete: z.boolean() })),
  },
  responses: {
    200: json(RetiringSchema, 'retiring (the sweep carries it out)'),
    400: errorAnswer('confirm_mismatch: `confirm` is not the server’s name'),
    403: errorAnswer('forbidden: not the owner, or `delete` asked by the owner (deleting is staff’s)'),
    404: errorAnswer('no such server'),
  },
});

const cancel = defineRoute({ tier: 'app' }, {
  method: 'delete',
  path: '/api/v1/servers/{name}/retirement',
  summary: 'Call off a retirement the sweep has not carried out yet',
  request: { params: ServerNameParam },
  responses: { 204: { description: 'not retiring' }, 403: errorAnswer('forbidden: not the owner, or a deletion staff asked for (staff call it off)'), 404: errorAnswer('no such server') },
});

/** Retirement of a server. External face, owner or staff. */
export function retirementRoutes(deps: AppDeps & ServersParts) {
  return createRouter()
    .openapi(request, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const row = await requestRetirement(deps, name, c.var.session, body.delete, c.var.requestId, body.confirm);
      return c.json({ name, retiring: retiringView(row) }, 200);
    })
    .openapi(cancel, async (c) => {
      await cancelRetirement(deps, c.req.valid('param').name, c.var.session, c.var.requestId);
      return c.body(null, 204);
    });
}
