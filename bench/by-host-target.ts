/**
 * One server under test for bench/by-host.ts, alone in its own process so that the targets share
 * neither the JIT's type feedback nor the garbage collector. Started by that bench, not by hand:
 *
 *   by-host-target.ts full    the internal face (createApps) on runtime/serve.ts
 *   by-host-target.ts hono    a bare Hono route on the same cache, on runtime/serve.ts
 *   by-host-target.ts node    a bare node:http server on the same cache
 *
 * Each builds the same simulated fleet (servers/by-host-fleet.ts), announces {"port": N} on stdout
 * once listening, and exits on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { createApps } from '../src/app/index.js';
import { createLogger } from '../src/lib/logger.js';
import { serve } from '../src/runtime/serve.js';
import { announce } from './servers/announce.js';
import { BY_HOST_PREFIX, byHostFleet } from './servers/by-host-fleet.js';

const role = process.argv[2];
if (role !== 'full' && role !== 'hono' && role !== 'node') {
  process.stderr.write('usage: by-host-target.ts full | hono | node\n');
  process.exit(2);
}

const { deps, cache } = await byHostFleet();

function bareHono() {
  return new Hono().get(`${BY_HOST_PREFIX}:host`, (c) => {
    const server = cache.byHost(c.req.param('host'));
    return server ? c.json(server.info) : c.json({ error: { code: 'not_found', message: 'none' } }, 404);
  });
}

function bareNode(): Promise<number> {
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    const found = url.startsWith(BY_HOST_PREFIX) ? cache.byHost(decodeURIComponent(url.slice(BY_HOST_PREFIX.length))) : undefined;
    res.writeHead(found ? 200 : 404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(found ? found.info : { error: { code: 'not_found' } }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

async function listen(): Promise<number> {
  if (role === 'node') return bareNode();
  const fetch = role === 'full' ? createApps(deps).internal.fetch : bareHono().fetch;
  return (await serve({ fetch, port: 0, host: '127.0.0.1', log: createLogger('warn') })).port;
}

const port = await listen();
process.once('SIGTERM', () => process.exit(0));
announce({ port });
