import { createApps } from './app/index.js';
import { SimulatedCluster } from './adapters/cluster/simulated.js';
import type { ClusterAdapter } from './adapters/cluster/types.js';
import type { Config } from './config.js';
import { openDatabase } from './db/client.js';
import type { Deps } from './deps.js';
import { startAccountHousekeeping } from './features/accounts/housekeeping.js';
import { setupOnStart } from './features/auth/setup-token.js';
import { SIMULATED_SYSTEM_SERVERS, startServersFeature, stopServersFeature } from './features/servers/startup.js';
import { startWorldsHousekeeping } from './features/worlds/housekeeping.js';
import { systemClock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { serve, type Listening } from './runtime/serve.js';
import { assembleDeps } from './wiring.js';

export interface RunningService {
  deps: Deps;
  internal: Listening;
  external: Listening;
  /** Graceful stop: stop accepting, end streams, finish in-flight requests, close the database. */
  stop(): Promise<void>;
}

function createCluster(config: Config): ClusterAdapter {
  if (config.cluster === 'kubernetes') {
    throw new Error('CLUSTER=kubernetes: the Kubernetes adapter is not part of this build yet; use CLUSTER=simulated');
  }
  const cluster = new SimulatedCluster({ clock: systemClock });
  for (const spec of SIMULATED_SYSTEM_SERVERS) cluster.addServer(spec);
  cluster.startTicking();
  return cluster;
}

/** Wires the dependencies from the configuration and serves both faces. */
export async function startService(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningService> {
  const shutdown = new AbortController();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
  const cluster = createCluster(config);
  const deps = assembleDeps({ config, log, database, cluster, shutdown: shutdown.signal });
  const { mail } = deps;
  if (mail?.kind === 'log') {
    log.warn('mail goes to this log (no SMTP_URL): sign-in codes are written here; set SMTP_URL, or MAIL_TRANSPORT=none to refuse mail');
  }
  await setupOnStart(deps);
  const stopHousekeeping = startAccountHousekeeping(deps);
  await startServersFeature(deps);
  const stopWorlds = startWorldsHousekeeping(deps);
  const apps = createApps(deps);
  const internal = await serve({ fetch: apps.internal.fetch, port: config.internalPort, host: config.host, log });
  const external = await serve({ fetch: apps.external.fetch, port: config.externalPort, host: config.host, log });
  log.info(
    { internal_port: internal.port, external_port: external.port, host: config.host, database: database.kind, cluster: cluster.kind },
    'listening',
  );
  let stopping: Promise<void> | undefined;
  return {
    deps,
    internal,
    external,
    stop: () =>
      (stopping ??= (async () => {
        shutdown.abort();
        stopHousekeeping();
        await Promise.all([internal.close(), external.close()]);
        stopWorlds();
        await deps.worlds.jobs.idle();
        stopServersFeature(deps);
        deps.sessionVerifier.close();
        await cluster.close();
        await mail?.close();
        await database.close();
        log.info('stopped');
      })()),
  };
}
