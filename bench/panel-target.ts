/**
 * The service under bench/panel.ts, in its own process: the external face over a simulated fleet
 * of BENCH_SERVERS (1,000) servers, all claimed by one signed-in user on the panel host. Announces
 * {"port", "cookie"} once listening; exits on SIGTERM.
 */
import { pino } from 'pino';
import { SimulatedCluster } from '../src/adapters/cluster/simulated.js';
import { createApps } from '../src/app/index.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { users } from '../src/db/schema/accounts.js';
import { serverClaims } from '../src/db/schema/servers.js';
import { mintSession } from '../src/features/accounts/sessions/session-service.js';
import { systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { serve } from '../src/runtime/serve.js';
import { assembleDeps } from '../src/service.js';

const SERVERS = Number(process.env.BENCH_SERVERS ?? 1_000);
const HOST = 'panel.felis.test';

const config = loadConfig({ DATABASE_URL: 'memory:', ROOT_DOMAIN: 'felis.test', PANEL_HOST: HOST, CONSOLE_HOST: 'console.felis.test', LOG_LEVEL: 'info' });
const database = await openDatabase({ url: 'memory:', dataDir: '/tmp' });
const cluster = new SimulatedCluster({ clock: systemClock });
for (let i = 0; i < SERVERS; i++) {
  cluster.addServer({ name: `s${i}`, subdomain: `play${i}`, memory: '4Gi', storage: '10Gi', cpu: '2', autostartPolicy: 'public', labels: {} });
}
const log = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
const deps = assembleDeps({ config, log, database, cluster });
await deps.serverCache.ready();
const now = new Date();
const [user] = await database.db.insert(users).values({ username: 'bench', createdAt: now, updatedAt: now }).returning();
for (let i = 0; i < SERVERS; i += 500) {
  const batch = Array.from({ length: Math.min(500, SERVERS - i) }, (_, k) => ({ serverName: `s${i + k}`, subdomain: `play${i + k}`, userId: user!.id, claimedAt: now }));
  await database.db.insert(serverClaims).values(batch);
}
const { token } = await mintSession(deps, database.db, { userId: user!.id, host: HOST, method: 'passkey' });
const { port } = await serve({ fetch: createApps(deps).external.fetch, port: 0, host: '127.0.0.1', log });
process.once('SIGTERM', () => void database.close().finally(() => process.exit(0)));
process.stdout.write(`${JSON.stringify({ ready: true, port, cookie: `svc_session=${token}` })}\n`);
