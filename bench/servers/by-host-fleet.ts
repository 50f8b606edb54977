import { pino } from 'pino';
import { SimulatedCluster } from '../../src/adapters/cluster/simulated.js';
import { loadConfig } from '../../src/config.js';
import type { ServiceParts } from '../../src/app/index.js';
import { openDatabase } from '../../src/db/client.js';
import { type ServerCache } from '../../src/features/servers/core/cache.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { assembleDeps } from '../../src/service.js';

export const BY_HOST_PREFIX = '/api/v1/servers/by-host/';
export const BENCH_TOKEN = 'bench-proxy-token-0123456789abcdef';
export const FLEET_SIZE = Number(process.env.BENCH_SERVERS ?? 10_000);
/** What the proxy sends for a player typing the address by hand: any case, a trailing dot, a port. */
export const BENCH_HOST = `PLAY${Math.floor(FLEET_SIZE / 2)}.Felis.Test.:25565`;

/**
 * The service's deps over a simulated fleet of FLEET_SIZE servers, with the server cache synced.
 * Request lines go at BENCH_LOG_LEVEL (default info; warn leaves them out) to /dev/null,
 * synchronously, as main.ts's logger writes stdout; the hot reads' lines are sampled as
 * LOG_HOT_READS_SAMPLE (passed through) says.
 */
export async function byHostFleet(): Promise<{ deps: ServiceParts; cache: ServerCache }> {
  const config = loadConfig({
    DATABASE_URL: 'memory:',
    SERVICE_TOKEN_PROXY: BENCH_TOKEN,
    ROOT_DOMAIN: 'felis.test',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    LOG_HOT_READS_SAMPLE: process.env.LOG_HOT_READS_SAMPLE,
  });
  const database = await openDatabase({ url: 'memory:', dataDir: '/tmp' });
  const cluster = new SimulatedCluster({ clock: systemClock });
  for (let i = 0; i < FLEET_SIZE; i++) {
    cluster.addServer({ name: `s${i}`, subdomain: `play${i}`, memory: '4Gi', storage: '10Gi', cpu: '2', autostartPolicy: 'public', labels: {} });
  }
  const log = createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: true }));
  const deps = assembleDeps({ config, log, database, cluster });
  const cache = deps.serverCache;
  await cache.ready();
  return { deps, cache };
}
