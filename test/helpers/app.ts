import type { OpenAPIHono } from '@hono/zod-openapi';
import { SimulatedCluster } from '../../src/adapters/cluster/simulated.js';
import { StaticRegistry } from '../../src/adapters/registry/static.js';
import { createApp, type FaceApp } from '../../src/app/create-app.js';
import type { RouteTable } from '../../src/http/route.js';
import { createApps, type ServiceParts } from '../../src/app/index.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import type { AppEnv, Face } from '../../src/http/env.js';
import { createMetrics } from '../../src/http/metrics.js';
import { ManualClock } from '../../src/lib/clock.js';
import { assembleDeps } from '../../src/service.js';
import { captureLog, type CapturedLog } from './log.js';

export const TOKENS = {
  proxy: 'test-proxy-token-0123456789',
  limbo: 'test-limbo-token-0123456789',
  build: 'test-build-token-0123456789',
  ops: 'test-ops-token-0123456789abc',
} as const;

export const TEST_ENV = {
  DATABASE_URL: 'memory:',
  SERVICE_TOKEN_PROXY: TOKENS.proxy,
  SERVICE_TOKEN_LIMBO: TOKENS.limbo,
  SERVICE_TOKEN_BUILD: TOKENS.build,
  SERVICE_TOKEN_OPS: TOKENS.ops,
  ROOT_DOMAIN: 'felis.test',
  PANEL_HOST: 'panel.felis.test',
  CONSOLE_HOST: 'console.felis.test',
  LOG_LEVEL: 'info',
  // Tests write sessions and users straight into the database and expect the next request to see
  // it; test/http/session-cache.test.ts turns the cache on.
  SESSION_CACHE_MS: '0',
  // Tests choose their mail transport; by default there is no relay (mail_unavailable).
  MAIL_TRANSPORT: 'none',
  // Tests of the e-mail door's answer time set their own.
  EMAIL_DOOR_ANSWER_MS: '0',
};

export type TestDeps = ServiceParts & { clock: ManualClock; cluster: SimulatedCluster; captured: CapturedLog };

/** Deps on the embedded adapters, a manual clock and a captured log; override anything. */
export function createTestDeps(
  database: DatabaseHandle,
  options: { env?: Record<string, string | undefined>; overrides?: Partial<ServiceParts> } = {},
): TestDeps {
  const config: Config = loadConfig({ ...TEST_ENV, ...options.env } as NodeJS.ProcessEnv);
  const captured = captureLog(config.logLevel);
  const clock = new ManualClock('2026-06-01T12:00:00.000Z');
  return {
    ...assembleDeps({
      config,
      log: captured.log,
      database,
      clock,
      cluster: new SimulatedCluster({ clock }),
      registry: new StaticRegistry(),
      metrics: createMetrics({ defaultMetrics: false }),
      ...options.overrides,
    }),
    captured,
  } as TestDeps;
}

/** Both faces, exactly as main.ts builds them. */
export function createTestApps(deps: ServiceParts) {
  return createApps(deps);
}

/** One router on the real middleware stack of a face, for focused tests. */
export function createTestApp(face: Face, deps: ServiceParts, routes: RouteTable): FaceApp {
  return createApp(face, deps).addRoutes(routes);
}

export function bearer(caller: keyof typeof TOKENS): Record<string, string> {
  return { Authorization: `Bearer ${TOKENS[caller]}` };
}

/** A JSON request init for `app.request()`. */
export function jsonRequest(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

export async function errorOf(response: Response): Promise<{ code: string; message: string; request_id?: string }> {
  const body = (await response.json()) as { error: { code: string; message: string; request_id?: string } };
  return body.error;
}
