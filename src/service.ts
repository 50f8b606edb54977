import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createStagingStore } from './adapters/backup-store/index.js';
import type { KubeConfig } from './adapters/cluster/kubernetes/kubeconfig.js';
import { LocalCluster } from './adapters/cluster/local/adapter.js';
import { SimulatedCluster } from './adapters/cluster/simulated.js';
import type { ClusterAdapter } from './adapters/cluster/types.js';
import { createMail } from './adapters/mail/index.js';
import { RconPool } from './adapters/rcon/pool.js';
import { OciRegistry } from './adapters/registry/oci.js';
import { StaticRegistry } from './adapters/registry/static.js';
import type { RegistryAdapter } from './adapters/registry/types.js';
import { createApps, createModules, type ServiceParts } from './app/index.js';
import type { Config } from './config.js';
import type { Deps, FeatureModule } from './deps.js';
import { releasePreviousLives, ReplicaHeartbeat, TaskList, type BackgroundTask, type PreviousLives } from './coordination/index.js';
import { openDatabase, type DatabaseHandle } from './db/client.js';
import { createAccountsParts } from './features/accounts/index.js';
import { createAuditParts } from './features/audit/index.js';
import { createAuthParts, setupOnStart } from './features/auth/index.js';
import { createBuildsParts } from './features/builds/index.js';
import { createConsoleParts, releasePreviousStreamSlots } from './features/console/index.js';
import { createFleetParts } from './features/fleet/index.js';
import { createNodesParts, nodeGuard } from './features/nodes/index.js';
import { migrateWithSafetyDump } from './features/operations/index.js';
import { passkeyDirectory } from './features/passkeys/index.js';
import { countServersByOwner, createServersParts, forgetDeletedServer, SIMULATED_SYSTEM_SERVERS, startServersFeature } from './features/servers/index.js';
import { forgetServerSchedules } from './features/schedules/index.js';
import { createVerifierParts } from './features/verifier/index.js';
import { createWorldsParts } from './features/worlds/index.js';
import { InternalApi, startGameListener, type GameListener } from './game-listener/index.js';
import { AnsweredWrites } from './http/answered-writes.js';
import { createMetrics } from './http/metrics.js';
import { systemClock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { cryptoRandom } from './lib/random.js';
import { serve, type Listening } from './runtime/serve.js';
import { databaseFailure, databaseNotUpYet, listenFailure } from './startup-failure.js';

/**
 * The composition root: the one place that builds the dependencies from the configuration, makes
 * the two apps, starts the background tasks in order and stops everything in the reverse order.
 */

export function createRegistry(config: Config): RegistryAdapter {
  if (!config.registryUrl) return new StaticRegistry();
  return new OciRegistry({ url: config.registryUrl, username: config.registryUsername, password: config.registryPassword });
}

/** This process's name as a lease holder: the pod (or host) and a random part, unique per life. */
export function replicaName(config: Pick<Config, 'podName'>): string {
  return `${config.podName ?? hostname()}/${randomBytes(4).toString('hex')}`;
}

export type DepsParts = Pick<ServiceParts, 'config' | 'log' | 'database'> & Partial<Omit<ServiceParts, 'config' | 'log' | 'database'>>;

/**
 * The infrastructure (src/deps.ts) from what is given and the embedded defaults: system clock and
 * randomness, a bare simulated cluster, the configured registry, mail and staging store.
 */
function assembleInfrastructure(parts: DepsParts): Deps {
  const clock = parts.clock ?? systemClock;
  const cluster: ClusterAdapter = parts.cluster ?? new SimulatedCluster({ clock });
  const replica = parts.replica ?? replicaName(parts.config);
  return {
    random: cryptoRandom,
    registry: createRegistry(parts.config),
    mail: createMail(parts.config, parts.log),
    shutdown: new AbortController().signal,
    replica,
    // Made here, started by the service as its first task (tests and benches beat it themselves).
    heartbeat: new ReplicaHeartbeat({ db: parts.database.db, clock, log: parts.log, replica }),
    staging: parts.staging ?? createStagingStore(parts.config),
    ...parts,
    clock,
    cluster,
    metrics: parts.metrics ?? createMetrics(),
    rcon: parts.rcon ?? new RconPool((name) => cluster.rconEndpoint(name)),
  };
}

/**
 * Assembles the service's parts: the service, the test harness, the benches and the process
 * fixtures all start here and override only what they must, so a new dependency is wired
 * everywhere at once. The infrastructure first, then each feature makes its own objects with its
 * own maker, in the order they need each other (fleet's collectors read the server cache); which
 * object a feature makes, and with what, is the feature's rule. Whatever `parts` names replaces
 * what would be made (each maker takes it as its `given`).
 */
export function assembleDeps(parts: DepsParts): ServiceParts {
  const infrastructure = assembleInfrastructure(parts);
  // The front door tells it of every write it answered; the caches of reads subscribe (the session
  // check, the menus).
  const answeredWrites = parts.answeredWrites ?? new AnsweredWrites();
  // Servers is handed by nodes, above it, whether a node's maintenance or a move holds a server down.
  const servers = { ...createServersParts(infrastructure, parts), nodeGuard: parts.nodeGuard ?? nodeGuard };
  return {
    answeredWrites,
    // What accounts is handed by the features above it (which it may not import).
    serverCounts: countServersByOwner,
    passkeys: passkeyDirectory,
    ...infrastructure,
    ...createAccountsParts(infrastructure, parts, answeredWrites),
    ...createAuditParts(infrastructure, parts),
    ...createAuthParts(parts),
    ...servers,
    ...createNodesParts(infrastructure, parts),
    ...createWorldsParts(infrastructure, parts),
    ...createBuildsParts(infrastructure, parts),
    ...createConsoleParts(infrastructure, parts),
    ...createVerifierParts(infrastructure, parts),
    ...createFleetParts({ ...infrastructure, ...servers }, parts),
  };
}

// For the process entry (src/main.ts), which imports the service and not the database layer.
export { isDriverTypeFetchFailure } from './db/driver-faults.js';

export interface RunningService {
  deps: ServiceParts;
  internal: Listening;
  external: Listening;
  /** The game listener, when GAME_PORT is set. */
  game?: GameListener;
  /** For the terminal (main.ts): what a person does next while the owner is still in setup. */
  setupHint?: string;
  /** Graceful stop: stop accepting, end streams, finish in-flight requests, stop the tasks, close the database. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The API server's coordinates; by default the pod's service account or `KUBECONFIG`. */
  kubeConfig?: KubeConfig;
  /**
   * On the simulated cluster, the file that keeps its servers when the configuration gives none
   * (a PostgreSQL or `memory:` database): bench/memory-startup-target.ts starts a fleet this way.
   */
  simulatedStateFile?: string;
}

async function createCluster(config: Config, log: Logger, options: StartOptions): Promise<ClusterAdapter> {
  if (config.cluster === 'kubernetes') {
    // Loaded only here: the Kubernetes client is about 870 modules and 80 MiB of resident memory
    // (docs/notes/issue-29-speed.md) that the simulated cluster never uses.
    const [{ KubernetesCluster }, { loadKubeConfig }, { DEFAULT_CRD }] = await Promise.all([
      import('./adapters/cluster/kubernetes/adapter.js'),
      import('./adapters/cluster/kubernetes/kubeconfig.js'),
      import('./adapters/cluster/kubernetes/resource.js'),
    ]);
    if (!config.kubeEula) log.warn('KUBE_EULA is not true: game servers will not start until the operator accepts the Minecraft EULA (https://aka.ms/MinecraftEULA) with KUBE_EULA=true');
    return new KubernetesCluster({
      kubeConfig: options.kubeConfig ?? loadKubeConfig(),
      namespace: config.kubeNamespace,
      crd: { ...DEFAULT_CRD, group: config.kubeCrdGroup },
      gameNodeSelector: config.kubeGameNodeSelector,
      sharedWorldVolumes: config.kubeSharedWorldVolumes,
      eula: config.kubeEula,
      clock: systemClock,
      log,
    });
  }
  if (config.cluster === 'local') {
    if (!config.local.eula) log.warn('LOCAL_EULA is not true: game servers will not start until the operator accepts the Minecraft EULA (https://aka.ms/MinecraftEULA) with LOCAL_EULA=true');
    return LocalCluster.open({
      ...config.local,
      worldsRoot: join(config.dataDir, 'worlds'),
      stateDir: join(config.dataDir, 'local'),
      clock: systemClock,
      log,
    });
  }
  // On the embedded database in DATA_DIR, the servers a user made are kept beside it across
  // restarts; a throw-away (`memory:`) database or a PostgreSQL one gets a throw-away cluster.
  // Three game nodes and one awaiting approval, so a local run shows node control and moves.
  const embeddedOnDisk = !config.databaseUrl?.startsWith('postgres') && config.databaseUrl !== 'memory:';
  const stateFile = embeddedOnDisk ? join(config.dataDir, 'simulated-cluster.json') : options.simulatedStateFile;
  const cluster = new SimulatedCluster({ clock: systemClock, nodes: 3, pendingNodes: 1, nodeLocalVolumes: true, ...(stateFile ? { stateFile } : {}) });
  for (const spec of SIMULATED_SYSTEM_SERVERS) if (!cluster.server(spec.name)) cluster.addServer(spec);
  cluster.startTicking();
  return cluster;
}

/**
 * Every background task of the service, in the order they start: the heartbeat, the cluster's own
 * work, then each feature module's tasks in the modules' order (src/app/modules.ts).
 */
function serviceTasks(deps: ServiceParts, modules: readonly FeatureModule[]): BackgroundTask[] {
  return [
    // First to start and last to stop: the others judge this replica's in-process locks by it.
    deps.heartbeat.task(),
    // The cluster's own work (on Kubernetes the lifecycle controller, led by its own Lease),
    // handed what it asks of the servers feature.
    ...deps.cluster.tasks({
      registry: deps.metrics.registry,
      log: deps.log,
      onDesiredStateChange: (listener) => deps.serverCache.onDesiredStateChange(listener),
      forgetServer: (name) => forgetDeletedServer(deps, name, [forgetServerSchedules]),
    }),
    ...modules.flatMap((module) => module.tasks),
  ];
}

/**
 * Releases at once what this replica's previous life left when it died (SIGKILL, a crash): its
 * leases (loop rounds, leadership, the world locks of its in-process jobs), its console stream
 * slots, and the partial archives of its killed writes. Which leases are a previous life's: on
 * the embedded database every one (one process opens it at a time); on PostgreSQL those of
 * replicas with this pod's name (POD_NAME), none without one (two processes may share a host).
 */
async function forgetPreviousLives(deps: ServiceParts, startedAt: Date): Promise<void> {
  const current = deps.replica;
  const lives: PreviousLives | undefined =
    deps.database.kind === 'pglite'
      ? { all: true, current }
      : deps.config.podName
        ? { prefix: `${deps.config.podName}/`, current, taken: deps.worlds.folders !== undefined }
        : undefined;
  try {
    if (lives) {
      const leases = await releasePreviousLives(deps.database.db, lives);
      const slots = await releasePreviousStreamSlots(deps, lives);
      if (leases.length > 0 || slots > 0) deps.log.info({ leases, stream_slots: slots }, 'released what a previous life of this replica held');
    }
    const partials = (await deps.worlds.store.sweepPartials?.(startedAt)) ?? 0;
    if (partials > 0) deps.log.info({ partials }, 'removed the partial archives of killed writes');
  } catch (err) {
    deps.log.warn({ err }, 'could not release what a previous life held; it lapses by itself');
  }
}

/** How often a service that started before its database tries to migrate it again. */
const DATABASE_WAIT_RETRY_MS = 2_000;

/**
 * A service that started before its database: migrates it as soon as it answers, then lets the
 * routes through (the guard's hold) and starts what needs the database. Stops trying on shutdown.
 */
async function waitForDatabase(
  o: { database: DatabaseHandle; config: Config; log: Logger; signal: AbortSignal },
  then: () => Promise<unknown>,
): Promise<void> {
  while (!o.signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, DATABASE_WAIT_RETRY_MS).unref());
    if (o.signal.aborted) return;
    try {
      await migrateWithSafetyDump({ database: o.database, config: o.config, clock: systemClock }, o.log);
    } catch (err) {
      if (databaseNotUpYet(err, o.config)) continue;
      o.log.error({ err: databaseFailure(err, o.config) }, 'the database answers but cannot be migrated: still answering 503');
      continue;
    }
    o.database.guard.release();
    o.log.info({ dependency: 'database' }, 'database answers: serving');
    try {
      const hint = await then();
      if (hint && process.stderr.isTTY) process.stderr.write(`${hint}\n`);
    } catch (err) {
      o.log.error({ err }, 'starting what needs the database failed');
    }
    return;
  }
}

/**
 * Wires the dependencies from the configuration and serves both faces. A failure on the way (the
 * database, a port) stops whatever had started, closes the database and rejects, with a
 * StartupError naming what to change when it is known (src/startup-failure.ts): nothing is left
 * half-started, and no owner token is minted or shown by a service that did not come up.
 */
export async function startService(config: Config, log: Logger = createLogger(config.logLevel), options: StartOptions = {}): Promise<RunningService> {
  const shutdown = new AbortController();
  const startedAt = systemClock.now();
  // Until both faces listen, a database that does not answer is a failed start (one line from
  // main.ts), not the running service's "answering 503" episode.
  let serving = false;
  const guardLog: Pick<Logger, 'warn' | 'info'> = {
    warn: (...args: Parameters<Logger['warn']>) => serving && log.warn(...args),
    info: (...args: Parameters<Logger['info']>) => serving && log.info(...args),
  } as Pick<Logger, 'warn' | 'info'>;
  let database: DatabaseHandle | undefined;
  // A PostgreSQL that is not up yet is waited out (503 meanwhile), not a failed start: on
  // Kubernetes an exit would be a crash loop for as long as the database is away.
  let waitingForDatabase = false;
  try {
    database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, log: guardLog, migrate: false });
    await migrateWithSafetyDump({ database, config, clock: systemClock }, log);
  } catch (err) {
    if (!database || !databaseNotUpYet(err, config)) {
      await database?.close().catch(() => {});
      throw databaseFailure(err, config);
    }
    waitingForDatabase = true;
    database.guard.hold('the database has not answered since start-up');
    log.warn({ dependency: 'database', reason: databaseFailure(err, config).message }, 'database unreachable at start-up: answering 503 until it answers');
  }
  const db = database;
  // What has started so far: `stop` and a failed start both stop it, in this one order.
  let deps: ServiceParts | undefined;
  let cluster: ClusterAdapter | undefined;
  let tasks: TaskList | undefined;
  let internal: Listening | undefined;
  let external: Listening | undefined;
  let game: GameListener | undefined;
  const teardown = async () => {
    shutdown.abort();
    await game?.close();
    await Promise.all([internal?.close(), external?.close()]);
    await tasks?.stop();
    // What the features made is closed by their modules' closing tasks, above; the RCON pool is the infrastructure's.
    deps?.rcon.close();
    await cluster?.close();
    await deps?.mail?.close();
    await db.close();
  };
  try {
    cluster = await createCluster(config, log, options);
    deps = assembleDeps({ config, log, database: db, cluster, shutdown: shutdown.signal });
    if (deps.mail?.kind === 'log') {
      log.warn('mail goes to this log (no SMTP_URL): sign-in codes are written here; set SMTP_URL, or MAIL_TRANSPORT=none to refuse mail');
    }
    if (deps.worlds.unavailable) log.error({ cluster: cluster.kind }, deps.worlds.unavailable);
    if (config.cluster === 'kubernetes' && !config.backupS3Bucket && !config.singleReplica) {
      log.warn({ staging: deps.staging.kind }, 'no BACKUP_S3_BUCKET: upload parts and submission contexts stay on this replica\'s disk, so another replica cannot continue them; set BACKUP_S3_BUCKET');
    }
    const modules = createModules(deps);
    tasks = new TaskList(log).add(...serviceTasks(deps, modules));
    const started = deps;
    const taskList = tasks;
    /** What needs the database: the servers feature's start, the background tasks, the owner token. */
    const startOnDatabase = async (externalPort: number) => {
      await forgetPreviousLives(started, startedAt);
      await startServersFeature(started);
      taskList.start();
      return setupOnStart(started, { externalPort });
    };
    if (!waitingForDatabase) await forgetPreviousLives(deps, startedAt);
    if (!waitingForDatabase) await startServersFeature(deps);
    if (!waitingForDatabase) tasks.start();
    const apps = createApps(deps, modules);
    const listen = (face: 'internal' | 'external') =>
      serve({
        fetch: apps[face].fetch,
        port: face === 'internal' ? config.internalPort : config.externalPort,
        host: config.host,
        log,
        headersTimeoutMs: config.httpHeadersTimeoutMs,
        // The external face is capped, the internal one not: probes and the proxy still get a
        // descriptor while the external face is flooded.
        ...(face === 'external'
          ? {
              maxConnections: config.httpMaxConnections,
              // Behind an edge, the peer is the edge: capped per address only with TRUSTED_PROXIES, which are left alone.
              maxConnectionsPerAddress: config.clientIpHeader && !config.trustedProxies ? 0 : config.httpMaxConnectionsPerAddress,
              ...(config.clientIpHeader && config.trustedProxies ? { uncappedPeers: config.trustedProxies } : {}),
            }
          : {}),
      }).catch((err: unknown) => {
        throw listenFailure(err, face, config);
      });
    internal = await listen('internal');
    external = await listen('external');
    if (config.game) {
      // In this process, asking the internal face over loopback with the proxy's token: one command
      // runs everything, and the listener knows the contract only, never a feature's code.
      const loopback = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
      game = await startGameListener({
        port: config.game.port,
        host: config.game.host,
        maxConnections: config.game.maxConnections,
        holdMs: config.game.holdMs,
        api: new InternalApi({ baseUrl: `http://${loopback.includes(':') ? `[${loopback}]` : loopback}:${internal.port}`, token: config.serviceTokens.proxy! }),
        log,
        ...(config.panelHost ? { panelUrl: config.panelHost } : {}),
      });
    }
    serving = true;
    log.info(
      { internal_port: internal.port, external_port: external.port, host: config.host, database: db.kind, cluster: cluster.kind, replica: deps.replica },
      'listening',
    );
    // Only now, on a service that answers, is an owner token minted and shown.
    const setupHint = waitingForDatabase ? undefined : await setupOnStart(deps, { externalPort: external.port });
    if (waitingForDatabase) void waitForDatabase({ database: db, config, log, signal: shutdown.signal }, () => startOnDatabase(external!.port));
    let stopping: Promise<void> | undefined;
    return {
      deps,
      internal,
      external,
      ...(game ? { game } : {}),
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
