import { z } from '@hono/zod-openapi';
import { DESIRED_STATES } from '../../adapters/cluster/types.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { claimForUser } from './ownership/index.js';
import { createServer } from './create.js';
import { fleet, myServers } from './lists.js';
import {
  ClaimResponse,
  CreateServerBody,
  CreateServerResponse,
  DesiredStateResponse,
  FleetServerSchema,
  MyServerViewSchema,
  PatchServerBody,
  ServerInfoSchema,
  ServerNameParam,
  ServerStatusSchema,
} from './core/index.js';
import { allowlistRoutes } from './allowlist/index.js';
import { memberRoutes } from './ownership/index.js';
import { powerRoutes } from './power-routes.js';
import { retirementRoutes } from './retirement-routes.js';
import { statusForUser, stopFromPanel, wakeFromPanel } from './service.js';
import { updateServer } from './update.js';
import type { ServersParts } from './core/index.js';
import type { AppDeps } from '../../http/env.js';

const wake = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/wake',
  summary: 'Wake a server (the owner also retries a failed start)',
  request: { params: ServerNameParam },
  responses: {
    202: json(DesiredStateResponse('Running').openapi('WakeResult'), 'the server is starting'),
    403: errorAnswer('not allowed to wake it, or wake_share_exceeded (the fair share of the node: servers woken but not owned, or the owner’s share of the running slots)'),
    404: errorAnswer('no such server'),
    409: errorAnswer('maintenance_in_progress, node_operation_busy (its node is under maintenance), server_retiring, or start_failed for a non-owner'),
    429: errorAnswer('cooldown: woken moments ago (Retry-After)'),
    503: errorAnswer('at_capacity, or the cluster cannot be reached'),
  },
});

const stop = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/stop',
  summary: 'Stop a server (owner or staff)',
  request: { params: ServerNameParam },
  responses: {
    202: json(DesiredStateResponse('Stopped').openapi('StopResult'), 'the server is stopping'),
    403: errorAnswer('not the owner'),
    404: errorAnswer('no such server'),
  },
});

const claim = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/claim',
  summary: 'Claim an unowned server',
  request: { params: ServerNameParam },
  responses: {
    200: json(ClaimResponse, 'claimed'),
    403: errorAnswer('quota_exceeded'),
    404: errorAnswer('no such server'),
    409: errorAnswer('already_claimed'),
    412: errorAnswer('not_linked: no linked Minecraft account'),
  },
});

const status = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/servers/{name}/status',
  summary: 'A server’s status (owner, staff, or an unclaimed server)',
  request: { params: ServerNameParam },
  responses: { 200: json(ServerStatusSchema, 'the server'), 403: errorAnswer('claimed by someone else'), 404: errorAnswer('no such server') },
});

const mine = defineRoute({ tier: 'app', setupAllowed: true }, {
  method: 'get',
  path: '/api/v1/me/servers',
  summary: 'The caller’s servers and the ones they can claim',
  responses: { 200: json(z.object({ servers: z.array(MyServerViewSchema) }), 'the list') },
});

const create = defineRoute({ tier: 'admin' }, {
  method: 'post',
  path: '/api/v1/servers',
  summary: 'Create a server (stopped)',
  request: { body: { content: { 'application/json': { schema: CreateServerBody } } } },
  responses: {
    201: json(CreateServerResponse, 'created'),
    400: errorAnswer('bad_request, bad_name, image_not_whitelisted or image_not_in_registry'),
    409: errorAnswer('the name or the subdomain is taken'),
    503: errorAnswer('registry_unavailable, or the cluster cannot be reached'),
  },
});

const fleetRoute = defineRoute({ tier: 'admin' }, {
  method: 'get',
  path: '/api/v1/fleet',
  summary: 'Every server with its owner',
  responses: { 200: json(z.object({ servers: z.array(FleetServerSchema) }), 'the fleet') },
});

const patchRoute = defineRoute({ tier: 'admin' }, {
  method: 'patch',
  path: '/api/v1/servers/{name}',
  summary: 'Change a server: display name, autostart policy, image (confirmed, pinned like create), limits, idle stop',
  request: { params: ServerNameParam, ...jsonBody(PatchServerBody) },
  responses: {
    200: json(z.object({ name: z.string(), desiredState: z.enum(DESIRED_STATES) }).openapi('PatchedServer'), 'changed'),
    400: errorAnswer('bad_request (an image change without confirmImageChange), image_not_whitelisted or image_not_in_registry'),
    404: errorAnswer('no such server'),
    503: errorAnswer('registry_unavailable, or the cluster cannot be reached'),
  },
});

/** Server routes of the external face: the panel (app tier) and the operator console (admin). */
export function externalServerRoutes(deps: AppDeps & ServersParts) {
  return createRouter()
    .openapi(wake, async (c) => {
      const { name } = c.req.valid('param');
      await wakeFromPanel(deps, name, c.var.session, c.var.requestId);
      return c.json({ name, desiredState: 'Running' as const }, 202);
    })
    .openapi(stop, async (c) => {
      const { name } = c.req.valid('param');
      await stopFromPanel(deps, name, c.var.session);
      return c.json({ name, desiredState: 'Stopped' as const }, 202);
    })
    .openapi(claim, async (c) => {
      const { name } = c.req.valid('param');
      await claimForUser(deps, name, c.var.session.userId);
      return c.json({ name, claimed: true as const }, 200);
    })
    .openapi(status, async (c) => c.json(await statusForUser(deps, c.req.valid('param').name, c.var.session), 200))
    .openapi(mine, async (c) => c.json({ servers: await myServers(deps, c.var.session.userId) }, 200))
    .openapi(create, async (c) => {
      const spec = await createServer(deps, c.req.valid('json'));
      return c.json({ name: spec.name, subdomain: spec.subdomain, desiredState: 'Stopped' as const }, 201);
    })
    .openapi(fleetRoute, async (c) => c.json({ servers: await fleet(deps, c.var.session.userId) }, 200))
    .openapi(patchRoute, async (c) => {
      const { name } = c.req.valid('param');
      const desiredState = await updateServer(deps, name, c.req.valid('json'), c.var.session.userId, c.var.requestId);
      return c.json({ name, desiredState }, 200);
    })
    .include(allowlistRoutes(deps))
    .include(retirementRoutes(deps))
    .include(powerRoutes(deps))
    .include(memberRoutes(deps));
}
