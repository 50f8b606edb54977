import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json } from '../../http/route.js';
import { DomainError } from '../../lib/errors.js';
import { writeAudit } from '../audit/index.js';
import { createServer } from './create.js';
import { CreateServerBody, CreateServerResponse } from './core/index.js';
import type { ServersParts } from './core/index.js';
import type { AppDeps } from '../../http/env.js';

/** A login name, as `felis` sends it (who ran the command; attribution for an honest operator). */
const OS_USER = /^[a-z_][a-z0-9_.-]{0,31}$/i;

const OpsCreateServerBody = CreateServerBody.extend({
  os_user: z.string().max(64).optional(),
}).openapi('OpsCreateServer');

const create = defineRoute({ tier: 'service', callers: ['ops'] }, {
  method: 'post',
  path: '/api/v1/internal/servers',
  summary: "An operator's server create (the `felis server create` command), audited to the operator",
  request: { body: { required: true, content: { 'application/json': { schema: OpsCreateServerBody } } } },
  responses: {
    201: json(CreateServerResponse, 'the server was made, Stopped'),
    400: errorAnswer('bad_request, bad_name (a reserved name or subdomain, or os_user is not a login name), image_not_whitelisted or image_not_in_registry'),
    409: errorAnswer('conflict: the name or the subdomain is taken'),
    503: errorAnswer('the cluster or the registry cannot be reached'),
  },
});

/**
 * The internal face's server create for the operator's tools (ops): the admin route's rules and
 * answers (the same `createServer`), with the operator named in the audit log. An API key never
 * reaches the admin tier, so this is how `felis server create` makes a server.
 */
export function opsServerRoutes(deps: AppDeps & ServersParts) {
  return createRouter().openapi(create, async (c) => {
    const { os_user: osUserIn, ...body } = c.req.valid('json');
    const osUser = osUserIn?.trim() ?? '';
    if (osUser !== '' && !OS_USER.test(osUser)) throw new DomainError('bad_name', 'os_user must be a login name (letters, digits, _ . -).');
    const spec = await createServer(deps, body);
    await writeAudit(deps.database.db, {
      at: deps.clock.now(),
      actor: osUser ? `ops:${osUser}` : 'ops',
      action: 'server.create',
      target: spec.name,
      detail: { subdomain: spec.subdomain, image: spec.image },
      requestId: c.var.requestId ?? null,
    });
    return c.json({ name: spec.name, subdomain: spec.subdomain, desiredState: 'Stopped' as const }, 201);
  });
}
