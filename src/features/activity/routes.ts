import { createRouter, defineRoute, errorAnswer, json } from '../../http/route.js';
import { ServerNameParam, type ServersParts } from '../servers/index.js';
import { ActivityQuery, AuditPageSchema, AuditQuery } from './schema.js';
import { listAudit, serverActivity } from './service.js';
import type { AppDeps } from '../../http/env.js';

const audit = defineRoute(
  { tier: 'admin' },
  {
    method: 'get',
    path: '/api/v1/audit',
    summary: 'Audited actions, newest first (staff): filter by actor, server, action and time',
    request: { query: AuditQuery },
    responses: { 200: json(AuditPageSchema, 'one page of the audit log'), 400: errorAnswer('bad_request') },
  },
);

const activity = defineRoute(
  { tier: 'app' },
  {
    method: 'get',
    path: '/api/v1/servers/{name}/activity',
    summary: "A server's audited actions, newest first: its owner (since their claim) and staff",
    request: { params: ServerNameParam, query: ActivityQuery },
    responses: {
      200: json(AuditPageSchema, 'one page of the server\'s activity'),
      400: errorAnswer('bad_request'),
      403: errorAnswer('forbidden: not its owner'),
      404: errorAnswer('not_found'),
      503: errorAnswer('unavailable: the cluster does not answer'),
    },
  },
);

export function activityRoutes(deps: AppDeps & ServersParts) {
  return createRouter()
    .openapi(audit, async (c) => c.json(await listAudit(deps, c.req.valid('query')), 200))
    .openapi(activity, async (c) => c.json(await serverActivity(deps, c.req.valid('param').name, c.var.session, c.req.valid('query')), 200));
}
