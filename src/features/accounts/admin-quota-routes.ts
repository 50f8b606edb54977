import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { replaceQuota, userQuota } from './admin-service.js';
import { QuotaLimitSchema, QuotaViewSchema, UserIdParam } from './schema.js';
import type { AccountsParts } from './parts.js';
import type { AppDeps } from '../../http/env.js';

const admin = { tier: 'admin' } as const;

const getQuotaRoute = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/users/{id}/quotas',
  summary: "A user's quota (null: unlimited); an account staff never gave one has the platform's defaults (default_max_servers, …)",
  request: { params: UserIdParam },
  responses: { 200: json(QuotaViewSchema, 'quota'), 404: errorAnswer('no such user') },
});

const putQuota = defineRoute(admin, {
  method: 'put',
  path: '/api/v1/users/{id}/quotas',
  summary: "Replace a user's quota; an absent or null limit is unlimited",
  request: {
    params: UserIdParam,
    ...jsonBody(
      z.strictObject({
        user_id: z.uuid().optional(),
        max_servers: QuotaLimitSchema.optional(),
        max_cpu_milli: QuotaLimitSchema.optional(),
        max_memory_mb: QuotaLimitSchema.optional(),
        max_storage_gb: QuotaLimitSchema.optional(),
      }),
    ),
  },
  responses: { 200: json(QuotaViewSchema, 'stored quota'), 404: errorAnswer('no such user') },
});

/** A user's quota. External face, admin tier. */
export function adminQuotaRoutes(deps: AppDeps & AccountsParts) {
  return createRouter()
    .openapi(getQuotaRoute, async (c) => c.json(await userQuota(deps, c.req.valid('param').id), 200))
    .openapi(putQuota, async (c) => c.json(await replaceQuota(deps, c.var.session, c.req.valid('param').id, c.req.valid('json'), c.var.requestId), 200));
}
