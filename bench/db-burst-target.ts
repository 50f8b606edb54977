/**
 * One service under test for bench/db-burst.ts, in its own process:
 *
 *   db-burst-target.js thread      the embedded default as `npm start` opens it: PGlite on its own
 *                                  thread behind pglite-socket, postgres-js (src/db/embedded.ts)
 *   db-burst-target.js inprocess   the previous embedded path: PGlite in the service's own thread
 *                                  through Drizzle's PGlite driver (openPglite), and no session
 *                                  cache (SESSION_CACHE_MS=0): the baseline
 *   db-burst-target.js postgres    a fresh database on BENCH_DATABASE_URL's server
 *   db-burst-target.js postgres-nocache   the same without the session cache: PostgreSQL's baseline
 *
 * Both faces as main.ts builds them over a simulated fleet of BENCH_SERVERS (10,000) servers with
 * the server cache synced, request lines at info to /dev/null; one user signed in. Announces
 * {"internal", "external", "cookie", "start_ms"} once listening; exits on SIGTERM.
 */
import { pino } from 'pino';
import postgres from 'postgres';
import { SimulatedCluster } from '../src/adapters/cluster/simulated.js';
import { loadConfig } from '../src/config.js';
import { openDatabase, openPglite } from '../src/db/client.js';
import { systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { assembleDeps } from '../src/service.js';
import { BENCH_TOKEN, FLEET_SIZE } from './servers/by-host-fleet.js';
import { PANEL_HOST, serveWithSignedInUser } from './servers/signed-in.js';

const started = performance.now();
const mode = process.argv[2] ?? '';
if (!['thread', 'inprocess', 'postgres', 'postgres-nocache'].includes(mode)) {
  process.stderr.write('usage: db-burst-target.js thread|inprocess|postgres|postgres-nocache\n');
  process.exit(2);
}
const baseline = mode === 'inprocess' || mode === 'postgres-nocache';

async function postgresUrl(): Promise<string> {
  const server = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `felis_bench_burst_${process.pid}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

const url = mode.startsWith('postgres') ? await postgresUrl() : 'memory:';
const database =
  mode === 'inprocess'
    ? await openPglite(undefined).then(async (handle) => {
        await handle.migrate();
        return handle;
      })
    : await openDatabase({ url, dataDir: '/tmp' });
const config = loadConfig({
  DATABASE_URL: url,
  SERVICE_TOKEN_PROXY: BENCH_TOKEN,
  PANEL_HOST,
  CONSOLE_HOST: 'console.felis.test',
  ROOT_DOMAIN: 'felis.test',
  LOG_LEVEL: 'info',
  ...(baseline ? { SESSION_CACHE_MS: '0' } : {}),
});
const cluster = new SimulatedCluster({ clock: systemClock });
for (let i = 0; i < FLEET_SIZE; i++) {
  cluster.addServer({ name: `s${i}`, subdomain: `play${i}`, memory: '4Gi', storage: '10Gi', cpu: '2', autostartPolicy: 'public', labels: {} });
}
const log = createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: true }));
const deps = assembleDeps({ config, log, database, cluster });
await deps.serverCache.ready();
const { internal, external, cookie } = await serveWithSignedInUser(deps, log);
process.once('SIGTERM', () => void database.close().finally(() => process.exit(0)));
process.stdout.write(
  `${JSON.stringify({ ready: true, internal: internal.port, external: external.port, cookie, start_ms: Math.round(performance.now() - started) })}\n`,
);
