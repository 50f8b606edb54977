import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json } from '../../http/route.js';
import { ServerNameParam, type ServersParts } from '../servers/index.js';
import { usageHistory, USAGE_RANGES, type UsageRange } from './usage.js';
import type { AppDeps } from '../../http/env.js';

const UsageQuery = z.strictObject({
  range: z.enum(Object.keys(USAGE_RANGES) as [UsageRange, ...UsageRange[]]).default('24h').openapi({ description: '24h: a point a minute; 30d: a point an hour' }),
});

const UsagePointSchema = z
  .object({
    at: z.string().openapi({ format: 'date-time' }),
    players_avg: z.number(),
    players_max: z.number().int(),
    cpu_milli: z.number().int().nullable().openapi({ description: 'null where the cluster reports no pod metrics (or no pod ran)' }),
    memory_mib: z.number().int().nullable(),
  })
  .openapi('UsagePoint');

const UsageHistorySchema = z
  .object({ server: z.string(), range: z.enum(['24h', '30d']), resolution: z.enum(['minute', 'hour']), points: z.array(UsagePointSchema) })
  .openapi('UsageHistory');

const usage = defineRoute(
  { tier: 'app' },
  {
    method: 'get',
    path: '/api/v1/servers/{name}/usage',
    summary: "A server's players online, CPU and memory over time: its owner and staff",
    request: { params: ServerNameParam, query: UsageQuery },
    responses: {
      200: json(UsageHistorySchema, 'the time series, oldest first'),
      400: errorAnswer('bad_request'),
      403: errorAnswer('forbidden: not its owner'),
      404: errorAnswer('not_found'),
      503: errorAnswer('unavailable: the cluster does not answer'),
    },
  },
);

export function usageRoutes(deps: AppDeps & ServersParts) {
  return createRouter().openapi(usage, async (c) =>
    c.json(await usageHistory(deps, c.req.valid('param').name, c.var.session, c.req.valid('query').range), 200),
  );
}
