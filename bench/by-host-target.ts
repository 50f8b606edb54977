/**
 * One server under test for bench/by-host.ts, alone in its own process so that the targets share
 * neither the JIT's type feedback nor the garbage collector. Started by that bench, not by hand:
 *
 *   by-host-target.ts full    the internal face (createApps) on runtime/serve.ts
 *   by-host-target.ts hono    a bare Hono route on the same cache, on runtime/serve.ts
 *   by-host-target.ts node    a bare node:http server on the same cache
 *   by-host-target.ts floor   the bare Hono route plus only the work every answer requires,
 *                             by hand (servers/by-host-baselines.ts `requiredWorkOnly`)
 *
 * and, to weigh the service's home-made pieces one by one (docs/architecture.md):
 *
 *   by-host-target.ts native  the route written the Hono way: app.use() middlewares, the token
 *                             check as route middleware, zod-openapi's validator, prom-client
 *                             (servers/by-host-hono-native.ts)
 *   by-host-target.ts plain   the internal face without the Node fast paths: headers read through
 *                             Hono's request and set on each answer's context
 *
 * Each builds the same simulated fleet (servers/by-host-fleet.ts), announces {"port": N} on stdout
 * once listening, and exits on SIGTERM.
 */
import { createApps } from '../src/app/index.js';
import { createLogger } from '../src/lib/logger.js';
import { serve } from '../src/runtime/serve.js';
import { announce } from './servers/announce.js';
import { bareHono, bareNode, requiredWorkOnly } from './servers/by-host-baselines.js';
import { byHostFleet } from './servers/by-host-fleet.js';
import { honoNativeByHost } from './servers/by-host-hono-native.js';
import type { RuntimeBindings } from '../src/http/env.js';

const ROLES = ['full', 'hono', 'node', 'floor', 'native', 'plain'] as const;
const role = process.argv[2] as (typeof ROLES)[number];
if (!ROLES.includes(role)) {
  process.stderr.write(`usage: by-host-target.ts ${ROLES.join(' | ')}\n`);
  process.exit(2);
}

const { deps, cache } = await byHostFleet();

function fetchOf(): (request: Request, env: RuntimeBindings) => Response | Promise<Response> {
  switch (role) {
    case 'full':
      return createApps(deps).internal.fetch;
    case 'floor':
      return requiredWorkOnly(deps, cache).fetch;
    case 'native':
      return honoNativeByHost(deps, cache).fetch;
    case 'plain': {
      // No node:http request or response in the bindings: the front door's generic paths.
      const app = createApps(deps).internal;
      return (request) => app.fetch(request, {});
    }
    default:
      return bareHono(cache).fetch;
  }
}

async function listen(): Promise<number> {
  if (role === 'node') return bareNode(cache);
  return (await serve({ fetch: fetchOf(), port: 0, host: '127.0.0.1', log: createLogger('warn') })).port;
}

const port = await listen();
process.once('SIGTERM', () => process.exit(0));
announce({ port });
