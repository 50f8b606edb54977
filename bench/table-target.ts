/**
 * One server under test for bench/table.ts, in its own process. Started by that bench, not by hand:
 *
 *   table-target.js felis <pglite|postgres> <servers>
 *       the service as main.ts assembles it (both faces on runtime/serve.ts, every middleware, the
 *       request log at info to an asynchronous destination as main.ts's stdout, metrics) over a
 *       simulated fleet of <servers> servers, on the embedded database on its thread in a fresh
 *       DATA_DIR (as `npm start` on a first start) or on a fresh database of its own on
 *       BENCH_DATABASE_URL's PostgreSQL; one user signed in for /me.
 *   table-target.js bare <servers>
 *       the baseline: bare Hono routes on @hono/node-server (`/healthz`; by-host, status, menu and
 *       menu-access over the same simulated fleet's cache, looked up (menu-access: one pass over
 *       it) and answered with c.json, nothing else;
 *       hasJoined: the same outbound GET to the identity source, its profile answered with c.json).
 *   table-target.js source
 *       the identity source both ask for hasJoined: answers every hasJoined at once with a profile,
 *       in a process of its own so that neither side's CPU figure carries it.
 *
 * BENCH_SESSION_SOURCE (the source's URL) is the identity source of `felis` (SESSION_SOURCES) and
 * of `bare`. Announces {"internal", "external", "cookie"} (bare, source: {"internal"}) on stdout
 * once listening, and exits on SIGTERM, dropping what it made (the data folder, the database).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve as honoServe } from '@hono/node-server';
import { Hono } from 'hono';
import { SimulatedCluster } from '../src/adapters/cluster/simulated.js';
import { ServerCache } from '../src/features/servers/core/cache.js';
import { systemClock } from '../src/lib/clock.js';

// The baseline imports only what it runs (its RSS is the memory rows' baseline); the service's
// modules are imported by the `felis` branch below.

const [role, ...rest] = process.argv.slice(2);
const kind = role === 'felis' ? rest[0] : undefined;
const servers = role === 'source' ? 0 : Number(role === 'felis' ? rest[1] : rest[0]);
if ((role !== 'felis' && role !== 'bare' && role !== 'source') || (role === 'felis' && kind !== 'pglite' && kind !== 'postgres') || !Number.isInteger(servers)) {
  process.stderr.write('usage: table-target.js felis pglite|postgres SERVERS | bare SERVERS | source\n');
  process.exit(2);
}
const SESSION_SOURCE = process.env.BENCH_SESSION_SOURCE;
/** The profile the stand-in identity source answers (a player with a skin, as Mojang's). */
export const SOURCE_PROFILE_ID = '069a79f444e94726a5befca90e38aaf5';

/** The fleet: `servers` simulated servers named s0…, subdomains play0… */
function fleet(): SimulatedCluster {
  const cluster = new SimulatedCluster({ clock: systemClock });
  for (let i = 0; i < servers; i++) {
    cluster.addServer({ name: `s${i}`, subdomain: `play${i}`, memory: '4Gi', storage: '10Gi', cpu: '2', autostartPolicy: 'public', labels: {} });
  }
  return cluster;
}

const cleanups: Array<() => Promise<unknown> | unknown> = [];
process.once('SIGTERM', () => {
  void (async () => {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
    process.exit(0);
  })();
});

if (role === 'source') {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://source');
    if (url.pathname !== '/session/minecraft/hasJoined') return void res.writeHead(404).end();
    const body = JSON.stringify({ id: SOURCE_PROFILE_ID, name: url.searchParams.get('username'), properties: [{ name: 'textures', value: 'e30=', signature: 'c2ln' }] });
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ internal: (server.address() as AddressInfo).port })}\n`));
} else if (role === 'bare') {
  const sourceAgent = new Agent({ keepAlive: true, scheduling: 'lifo' });
  const cluster = fleet();
  const cache = new ServerCache(cluster, 'felis.test');
  await cache.ready();
  const app = new Hono()
    .get('/healthz', (c) => c.json({ status: 'ok' }))
    .get('/api/v1/servers/by-host/:host', (c) => {
      const server = cache.byHost(c.req.param('host'));
      return server ? c.json(server.info) : c.json({ error: { code: 'not_found' } }, 404);
    })
    .get('/api/v1/internal/servers/:name/status', (c) => {
      const server = cache.get(c.req.param('name'));
      return server ? c.json(server.info) : c.json({ error: { code: 'not_found' } }, 404);
    })
    // The menu's answer for the bench's fleet (no claims, no retirements): the entry's figures.
    .get('/api/v1/internal/servers/:name/menu', (c) => {
      const server = cache.get(c.req.param('name'));
      if (!server) return c.json({ error: { code: 'not_found' } }, 404);
      const { name, phase, ready, playersOnline, playersMax } = server.info;
      return c.json({ name, phase, ready, playersOnline, playersMax, claimable: true });
    })
    // menu-access for a player with no account: one pass over the cache, a verdict per tile by
    // the autostart policy alone (the fleet has no claims, retirements, allowlists or failed starts).
    .get('/api/v1/internal/player/menu-access/:mc_uuid', (c) => {
      const verdicts: Record<string, string> = {};
      for (const server of cache.all()) {
        if (server.reserved) continue;
        const policy = server.resource.spec.autostartPolicy ?? 'ownerOnly';
        verdicts[server.resource.spec.name] = policy === 'public' ? 'wake' : policy === 'allowlist' ? 'allowlist' : 'owner_only';
      }
      return c.json({ servers: verdicts });
    })
    // The same outbound call as the service's verifier: a keep-alive GET to the source, its JSON
    // profile read and answered; nothing else (no checks of the query, the profile or a bar list).
    .get('/session/minecraft/hasJoined', async (c) => {
      const url = new URL('/session/minecraft/hasJoined', SESSION_SOURCE);
      for (const name of ['username', 'serverId', 'ip']) {
        const value = c.req.query(name);
        if (value !== undefined) url.searchParams.set(name, value);
      }
      const profile = await new Promise<unknown>((resolve, reject) => {
        get(url, { agent: sourceAgent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
          res.on('error', reject);
        }).on('error', reject);
      });
      return c.json(profile as object);
    });
  honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
    process.stdout.write(`${JSON.stringify({ internal: info.port })}\n`);
  });
} else {
  const [{ pino }, { default: postgres }, { loadConfig }, { openDatabase }, { createLogger }, { assembleDeps }, { BENCH_TOKEN }, { PANEL_HOST, serveWithSignedInUser }] =
    await Promise.all([
      import('pino'),
      import('postgres'),
      import('../src/config.js'),
      import('../src/db/client.js'),
      import('../src/lib/logger.js'),
      import('../src/service.js'),
      import('./servers/by-host-fleet.js'),
      import('./servers/signed-in.js'),
    ]);
  let url: string | undefined;
  let dataDir = tmpdir();
  if (kind === 'postgres') {
    const server = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const name = `felis_bench_table_${process.pid}`;
    const admin = postgres(server, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    cleanups.push(async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    });
    const parsed = new URL(server);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'felis-bench-table-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  }
  const config = loadConfig({
    ...(url ? { DATABASE_URL: url } : {}),
    DATA_DIR: dataDir,
    SERVICE_TOKEN_PROXY: BENCH_TOKEN,
    ROOT_DOMAIN: 'felis.test',
    PANEL_HOST,
    CONSOLE_HOST: 'console.felis.test',
    EXTERNAL_PORT: '0',
    INTERNAL_PORT: '0',
    LOG_LEVEL: 'info',
    ...(SESSION_SOURCE ? { SESSION_SOURCES: JSON.stringify([{ name: 'bench', url: SESSION_SOURCE, primary: true }]) } : {}),
    // The bench's key makes far more than a script's requests a minute: its limit is not what is measured.
    API_KEY_REQUESTS_PER_MINUTE: '10000000',
    ...(process.env.LOG_HOT_READS_SAMPLE ? { LOG_HOT_READS_SAMPLE: process.env.LOG_HOT_READS_SAMPLE } : {}),
  });
  // main.ts writes its lines to stdout through pino's asynchronous destination; here to /dev/null.
  const log = createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: false }));
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
  cleanups.push(() => database.close());
  const deps = assembleDeps({ config, log, database, cluster: fleet() });
  await deps.serverCache.ready();
  const { internal, external, cookie, apiKey } = await serveWithSignedInUser(deps, log);
  cleanups.push(() => Promise.all([internal.close(1000), external.close(1000)]));
  process.stdout.write(`${JSON.stringify({ internal: internal.port, external: external.port, cookie, apiKey })}\n`);
}
