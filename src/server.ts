import { createApps } from './app/index.js';
import { SimulatedCluster } from './adapters/cluster/simulated.js';
import type { ClusterAdapter } from './adapters/cluster/types.js';
import type { Config } from './config.js';
import { openDatabase } from './db/client.js';
import type { Deps } from './deps.js';
import { createSessionVerifier } from './features/verifier/service.js';
import { createMetrics } from './http/metrics.js';
import { systemClock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { cryptoRandom } from './lib/random.js';
import { serve, type Listening } from './runtime/serve.js';

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
  return new SimulatedCluster();
}

/** Wires the dependencies from the configuration and serves both faces. */
export async function startService(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningService> {
  const shutdown = new AbortController();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
  const cluster = createCluster(config);
  const metrics = createMetrics();
  const sessionVerifier = createSessionVerifier({ config, clock: systemClock, metrics, log, database });
  const deps: Deps = {
    config,
    log,
    clock: systemClock,
    random: cryptoRandom,
    database,
    cluster,
    metrics,
    sessionVerifier,
    shutdown: shutdown.signal,
  };
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
        await Promise.all([internal.close(), external.close()]);
        sessionVerifier.close();
        await cluster.close();
        await database.close();
        log.info('stopped');
      })()),
  };
}
