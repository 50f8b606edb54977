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
 * Each builds the same simulated fleet (servers/by-host-fleet.ts), announces {"port": N} on stdout
 * once listening, and exits on SIGTERM.
 */
import { createApps } from '../src/app/index.js';
import { createLogger } from '../src/lib/logger.js';
import { serve } from '../src/runtime/serve.js';
import { announce } from './servers/announce.js';
import { bareHono, bareNode, requiredWorkOnly } from './servers/by-host-baselines.js';
import { byHostFleet } from './servers/by-host-fleet.js';

const role = process.argv[2];
if (role !== 'full' && role !== 'hono' && role !== 'node' && role !== 'floor') {
  process.stderr.write('usage: by-host-target.ts full | hono | node | floor\n');
  process.exit(2);
}

const { deps, cache } = await byHostFleet();

async function listen(): Promise<number> {
  if (role === 'node') return bareNode(cache);
  const fetch = role === 'full' ? createApps(deps).internal.fetch : role === 'floor' ? requiredWorkOnly(deps, cache).fetch : bareHono(cache).fetch;
  return (await serve({ fetch, port: 0, host: '127.0.0.1', log: createLogger('warn') })).port;
}

const port = await listen();
process.once('SIGTERM', () => process.exit(0));
announce({ port });
