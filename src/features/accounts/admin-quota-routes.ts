import { z } from '@hono/zod-openapi';
import { userQuotas } from '../../db/schema/accounts.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { liveUserOr404 } from './admin-service.js';
import { writeAudit } from '../audit/index.js';
import { getQuota } from './directory.js';
import { QuotaLimitSchema, QuotaViewSchema, UserIdParam } from './schema.js';

const admin = { tier: 'admin' } as const;

const getQuotaRoute = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/users/{id}/quotas',
  summary: "A user's quota (null: unlimited)",
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
export function adminQuotaRoutes() {
  return createRouter()
    .openapi(getQuotaRoute, async (c) => {
      const { deps } = c.var;
      const { id } = c.req.valid('param');
      await liveUserOr404(deps.database.db, id);
      return c.json(await getQuota(deps.database.db, id), 200);
    })
    .openapi(putQuota, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session;
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      if (body.user_id !== undefined && body.user_id !== id) throw new DomainError('bad_request', 'user_id differs from the path.');
      const limits = {
        maxServers: body.max_servers ?? null,
        maxCpuMilli: body.max_cpu_milli ?? null,
        maxMemoryMb: body.max_memory_mb ?? null,
        maxStorageGb: body.max_storage_gb ?? null,
      };
      const now = deps.clock.now();
      await deps.database.db.transaction(async (tx) => {
        await liveUserOr404(tx, id);
        await tx.insert(userQuotas).values({ userId: id, ...limits }).onConflictDoUpdate({ target: userQuotas.userId, set: limits });
        await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.quota', target: id, detail: { ...limits }, requestId: c.var.requestId });
      });
      return c.json(await getQuota(deps.database.db, id), 200);
    });
}
