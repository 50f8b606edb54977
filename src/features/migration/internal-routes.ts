import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { McUuidBody } from '../servers/index.js';
import { startMigration } from './service.js';

const start = defineRoute(
  { tier: 'service', callers: ['proxy'] },
  {
    method: 'post',
    path: '/api/v1/internal/account/migrate/start',
    summary: 'In game (/felis migrate): the account linked to this UUID enters migration',
    request: jsonBody(McUuidBody),
    responses: {
      201: json(z.object({ started: z.literal(true), state: z.literal('initiated') }), 'migration initiated'),
      404: errorAnswer('not_linked: the UUID is linked to no account'),
      409: errorAnswer('account_retired: the account already migrated, or is disabled'),
    },
  },
);

/** The in-game side of migration. Internal face. */
export function internalMigrationRoutes() {
  return createRouter().openapi(start, async (c) => {
    await startMigration(c.var.deps, c.req.valid('json').mc_uuid, c.var.requestId);
    return c.json({ started: true as const, state: 'initiated' as const }, 201);
  });
}
