import type { KubeConfig } from '@kubernetes/client-node';
import { createApps } from './app/index.js';
import { KubernetesCluster } from './adapters/cluster/kubernetes/adapter.js';
import { loadKubeConfig } from './adapters/cluster/kubernetes/kubeconfig.js';
import { DEFAULT_CRD } from './adapters/cluster/kubernetes/resource.js';
import { SimulatedCluster } from './adapters/cluster/simulated.js';
import type { ClusterAdapter } from './adapters/cluster/types.js';
import type { Config } from './config.js';
import { openDatabase } from './db/client.js';
import type { Deps } from './deps.js';
import { startAccountHousekeeping } from './features/accounts/housekeeping.js';
import { startIdentityHousekeeping } from './features/linking/housekeeping.js';
import { setupOnStart } from './features/auth/setup-token.js';
import { migrateWithSafetyDump } from './features/operations/db-backup.js';
import { serverCacheOf } from './features/servers/cache.js';
import { startRetirementSweep } from './features/servers/retirement-sweep.js';
import { startLifecycle } from './features/lifecycle/start.js';
import { SIMULATED_SYSTEM_SERVERS, startServersFeature, stopServersFeature } from './features/servers/startup.js';
import { startWorldsHousekeeping } from './features/worlds/housekeeping.js';
import { systemClock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { serve, type Listening } from './runtime/serve.js';
import { assembleDeps } from './wiring.js';
import { DEFAULT_BUILD_JOB_OPTIONS, KubernetesBuildRunner } from './features/builds/kubernetes-job.js';
import { watchBuildJobs } from './features/builds/job-watch.js';
import { BuildLogCopier } from './features/builds/log-copy.js';

export interface RunningService {
  deps: Deps;
  internal: Listening;
  external: Listening;
  /** Graceful stop: stop accepting, end streams, finish in-flight requests, close the database. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The API server's coordinates; by default the pod's service account or `KUBECONFIG`. */
  kubeConfig?: KubeConfig;
}

function createCluster(config: Config, log: Logger, options: StartOptions): ClusterAdapter {
  if (config.cluster === 'kubernetes') {
    return new KubernetesCluster({
      kubeConfig: options.kubeConfig ?? loadKubeConfig(),
      namespace: config.kubeNamespace,
      crd: { ...DEFAULT_CRD, group: config.kubeCrdGroup },
      gameNodeSelector: config.kubeGameNodeSelector,
      clock: systemClock,
      log,
    });
  }
  const cluster = new SimulatedCluster({ clock: systemClock });
  for (const spec of SIMULATED_SYSTEM_SERVERS) cluster.addServer(spec);
  cluster.startTicking();
  return cluster;
}

/** On Kubernetes, builds run as Jobs that reach back through the internal Service (deploy/services.yaml). */
function kubernetesRunners(config: Config, cluster: ClusterAdapter): Partial<Deps> {
  if (!(cluster instanceof KubernetesCluster)) return {};
  const internalUrl = `http://felis-internal.${config.kubeNamespace}.svc`;
  return { buildRunner: new KubernetesBuildRunner({ jobs: cluster, ...DEFAULT_BUILD_JOB_OPTIONS, namespace: config.kubeNamespace, internalUrl }) };
}

/** Wires the dependencies from the configuration and serves both faces. */
export async function startService(config: Config, log: Logger = createLogger(config.logLevel), options: StartOptions = {}): Promise<RunningService> {
  const shutdown = new AbortController();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, log, migrate: false });
  try {
    await migrateWithSafetyDump({ database, config, clock: systemClock }, log);
  } catch (err) {
    await database.close();
    throw err;
  }
  const cluster = createCluster(config, log, options);
  const deps = assembleDeps({ config, log, database, cluster, shutdown: shutdown.signal, ...kubernetesRunners(config, cluster) });
  const { mail } = deps;
  if (mail?.kind === 'log') {
    log.warn('mail goes to this log (no SMTP_URL): sign-in codes are written here; set SMTP_URL, or MAIL_TRANSPORT=none to refuse mail');
  }
  await setupOnStart(deps);
  const stopHousekeeping = startAccountHousekeeping(deps);
  const stopIdentityHousekeeping = startIdentityHousekeeping(deps);
  await startServersFeature(deps);
  const stopRetirementSweep = startRetirementSweep(deps);
  const lifecycle = cluster instanceof KubernetesCluster ? startLifecycle(deps, cluster) : undefined;
  // A wake or a stop reaches the controller at once rather than at its next pass.
  const stopKicks = lifecycle ? serverCacheOf(deps).onDesiredStateChange(() => lifecycle.kick()) : () => {};
  const stopBuildJobWatch = cluster instanceof KubernetesCluster ? watchBuildJobs(deps, cluster) : () => {};
  // The leader copies build pods' logs into the build log (the simulated runner writes its own).
  const buildLogCopy = lifecycle && cluster instanceof KubernetesCluster ? new BuildLogCopier(deps, { pods: cluster, leading: () => lifecycle.leading() }) : undefined;
  buildLogCopy?.start();
  if (deps.worlds.unavailable) log.error({ cluster: cluster.kind }, deps.worlds.unavailable);
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
        stopIdentityHousekeeping();
        stopRetirementSweep();
        await Promise.all([internal.close(), external.close()]);
        await buildLogCopy?.stop();
        stopKicks();
        await lifecycle?.stop();
        stopBuildJobWatch();
        stopWorlds();
        await deps.worlds.jobs.idle();
        stopServersFeature(deps);
        deps.consoleLogs.close();
        deps.rcon.close();
        deps.sessionVerifier.close();
        await cluster.close();
        await mail?.close();
        await database.close();
        log.info('stopped');
      })()),
  };
}
