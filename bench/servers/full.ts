import { z } from '@hono/zod-openapi';
import { pino } from 'pino';
import { createApps } from '../../src/app/index.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { createRouter, defineRoute } from '../../src/http/route.js';
import { createLogger } from '../../src/lib/logger.js';
import { serve } from '../../src/runtime/serve.js';
import { assembleDeps } from '../../src/service.js';
import { announce } from './announce.js';

/**
 * The full service as src/server.ts wires it (both faces, every middleware, the per-request log
 * line at LOG_LEVEL written synchronously to /dev/null, metrics), plus one BENCH-ONLY service-token
 * route on the internal face. The route lives here, never in src/: no product route exists yet
 * that exercises the token check without touching the database.
 */
const BenchSchema = z.object({ caller: z.string() });
const benchOnly = defineRoute(
  { tier: 'service', callers: ['proxy'] },
  {
    method: 'get',
    path: '/api/v1/bench-only/service-token',
    summary: 'BENCH ONLY: passes the full stack and the token check',
    responses: { 200: { description: 'the caller', content: { 'application/json': { schema: BenchSchema } } } },
  },
);

const config = loadConfig({ ...process.env, DATABASE_URL: 'memory:', EXTERNAL_PORT: '0', INTERNAL_PORT: '0' });
const log = createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: true }));
const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
const deps = assembleDeps({ config, log, database });
const apps = createApps(deps);
apps.internal.addRoutes(createRouter().openapi(benchOnly, (c) => c.json({ caller: c.var.caller ?? '' }, 200)));
const internal = await serve({ fetch: apps.internal.fetch, port: 0, host: '127.0.0.1', log });
const external = await serve({ fetch: apps.external.fetch, port: 0, host: '127.0.0.1', log });
announce({ port: internal.port, external_port: external.port });
process.once('SIGTERM', () => process.exit(0));
