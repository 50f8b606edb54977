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
import { databaseFailure, listenFailure } from './startup-failure.js';
import { DEFAULT_BUILD_JOB_OPTIONS, KubernetesBuildRunner } from './features/builds/kubernetes-job.js';
import { watchBuildJobs } from './features/builds/job-watch.js';
import { BuildLogCopier } from './features/builds/log-copy.js';

export interface RunningService {
  deps: Deps;
  internal: Listening;
  external: Listening;
  /** For the terminal (main.ts): what a person does next while the owner is still in setup. */
  setupHint?: string;
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

/**
 * Wires the dependencies from the configuration and serves both faces. A failure on the way (the
 * database, a port) stops whatever had started, closes the database and rejects, with a
 * StartupError naming what to change when it is known (src/startup-failure.ts): nothing is left
 * half-started, and no owner token is minted or shown by a service that did not come up.
 */
export async function startService(config: Config, log: Logger = createLogger(config.logLevel), options: StartOptions = {}): Promise<RunningService> {
  const shutdown = new AbortController();
  // Until both faces listen, a database that does not answer is a failed start (one line from
  // main.ts), not the running service's "answering 503" episode.
  let serving = false;
  const guardLog = { warn: (...a: Parameters<Logger['warn']>) => serving && log.warn(...a), info: (...a: Parameters<Logger['info']>) => serving && log.info(...a) } as Pick<Logger, 'warn' | 'info'>;
  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, log: guardLog, migrate: false });
    await migrateWithSafetyDump({ database, config, clock: systemClock }, log);
  } catch (err) {
    await database?.close().catch(() => {});
    throw databaseFailure(err, config);
  }
  const db = database;
  // What has started so far: `stop` and a failed start both stop it in this one order.
  let deps: Deps | undefined;
  let cluster: ClusterAdapter | undefined;
  let stopHousekeeping: (() => void) | undefined;
  let stopIdentityHousekeeping: (() => void) | undefined;
  let serversStarted = false;
  let stopRetirementSweep: (() => void) | undefined;
  let lifecycle: ReturnType<typeof startLifecycle> | undefined;
  let stopKicks: (() => void) | undefined;
  let stopBuildJobWatch: (() => void) | undefined;
  let buildLogCopy: BuildLogCopier | undefined;
  let stopWorlds: (() => void) | undefined;
  let internal: Listening | undefined;
  let external: Listening | undefined;
  const teardown = async () => {
    shutdown.abort();
    stopHousekeeping?.();
    stopIdentityHousekeeping?.();
    stopRetirementSweep?.();
    await Promise.all([internal?.close(), external?.close()]);
    await buildLogCopy?.stop();
    stopKicks?.();
    await lifecycle?.stop();
    stopBuildJobWatch?.();
    stopWorlds?.();
    await deps?.worlds.jobs.idle();
    if (deps && serversStarted) stopServersFeature(deps);
    deps?.consoleLogs.close();
    deps?.rcon.close();
    deps?.sessionVerifier.close();
    await cluster?.close();
    await deps?.mail?.close();
    await db.close();
  };
  try {
    cluster = createCluster(config, log, options);
    deps = assembleDeps({ config, log, database: db, cluster, shutdown: shutdown.signal, ...kubernetesRunners(config, cluster) });
    if (deps.mail?.kind === 'log') {
      log.warn('mail goes to this log (no SMTP_URL): sign-in codes are written here; set SMTP_URL, or MAIL_TRANSPORT=none to refuse mail');
    }
    stopHousekeeping = startAccountHousekeeping(deps);
    stopIdentityHousekeeping = startIdentityHousekeeping(deps);
    serversStarted = true;
    await startServersFeature(deps);
    stopRetirementSweep = startRetirementSweep(deps);
    const kube = cluster instanceof KubernetesCluster ? cluster : undefined;
    lifecycle = kube ? startLifecycle(deps, kube) : undefined;
    // A wake or a stop reaches the controller at once rather than at its next pass.
    const controller = lifecycle;
    stopKicks = controller ? serverCacheOf(deps).onDesiredStateChange(() => controller.kick()) : undefined;
    stopBuildJobWatch = kube ? watchBuildJobs(deps, kube) : undefined;
    // The leader copies build pods' logs into the build log (the simulated runner writes its own).
    buildLogCopy = controller && kube ? new BuildLogCopier(deps, { pods: kube, leading: () => controller.leading() }) : undefined;
    buildLogCopy?.start();
    if (deps.worlds.unavailable) log.error({ cluster: cluster.kind }, deps.worlds.unavailable);
    stopWorlds = startWorldsHousekeeping(deps);
    const apps = createApps(deps);
    const listen = (face: 'internal' | 'external') =>
      serve({ fetch: apps[face].fetch, port: face === 'internal' ? config.internalPort : config.externalPort, host: config.host, log }).catch((err: unknown) => {
        throw listenFailure(err, face, config);
      });
    internal = await listen('internal');
    external = await listen('external');
    serving = true;
    log.info(
      { internal_port: internal.port, external_port: external.port, host: config.host, database: db.kind, cluster: cluster.kind },
      'listening',
    );
    // Only now, on a service that answers, is an owner token minted and shown.
    const setupHint = await setupOnStart(deps, { externalPort: external.port });
    let stopping: Promise<void> | undefined;
    return {
      deps,
      internal,
      external,
      setupHint,
      stop: () =>
        (stopping ??= (async () => {
          await teardown();
          log.info('stopped');
        })()),
    };
  } catch (err) {
    await teardown().catch((stopErr: unknown) => log.error({ err: stopErr }, 'stopping a failed start failed'));
    throw err;
  }
}
