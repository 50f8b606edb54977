import type { BackupStore } from './adapters/backup-store/types.js';
import type { ClusterAdapter } from './adapters/cluster/types.js';
import type { MailAdapter } from './adapters/mail/types.js';
import type { RconPool } from './adapters/rcon/pool.js';
import type { RegistryAdapter } from './adapters/registry/types.js';
import type { Config } from './config.js';
import type { BackgroundTask, ReplicaHeartbeat } from './coordination/index.js';
import type { DatabaseHandle } from './db/client.js';
import type { Metrics } from './http/metrics.js';
import type { RouteTable } from './http/route.js';
import type { Clock } from './lib/clock.js';
import type { Logger } from './lib/logger.js';
import type { RandomSource } from './lib/random.js';

/**
 * The infrastructure every feature is built with: configuration, log, clock, randomness, the
 * database, the adapters (cluster, registry, mail, staging store, RCON), the metrics registry and
 * this replica's identity, heartbeat and shutdown signal. It names no feature: what a feature makes
 * (the worlds runtime, the build runner, the console's log hubs, the verifier, the session
 * authenticator, ...) is that feature's own part, declared and made by the feature (its
 * `createXParts`) and handed over by the composition root (src/service.ts `ServiceParts`) to the
 * features that ask for it by type.
 */
export interface Deps {
  config: Config;
  log: Logger;
  clock: Clock;
  random: RandomSource;
  database: DatabaseHandle;
  cluster: ClusterAdapter;
  /** The platform image registry (tag → digest), or a static table. */
  registry: RegistryAdapter;
  metrics: Metrics;
  /** Outbound mail; undefined when no relay is configured (the e-mail doors answer mail_unavailable). */
  mail?: MailAdapter;
  /**
   * Bytes in flight that any replica may be asked to continue (world upload parts): the bucket when
   * one is configured, else a folder under DATA_DIR (src/adapters/backup-store `createStagingStore`).
   */
  staging: BackupStore;
  /** One RCON connection per server, reused by every console command (password from the server's secret). */
  rcon: RconPool;
  /** This process's name as a lease holder (src/coordination): unique per replica and per life. */
  replica: string;
  /** This replica's heartbeat, and its judgement of which other replicas died (src/coordination). */
  heartbeat: ReplicaHeartbeat;
  /** Aborted when the process begins to shut down: long-lived streams end on it. */
  shutdown: AbortSignal;
}

/** The infrastructure by the name the issue gives it; `Deps` is kept for the files that name it. */
export type Infrastructure = Deps;

/**
 * What a feature module gives the composition root: `createX(infrastructure, { the APIs of the
 * features below it })` returns it. `api` is what the features above may be handed (its made
 * objects, by the feature's own type), `routes` its route tables by face (mounted in the face's
 * order, src/app/), `tasks` its background tasks in the order they start (they stop in reverse,
 * through the service's one task list).
 */
export interface FeatureModule<Api extends object = object> {
  readonly name: string;
  readonly api: Api;
  readonly routes: { readonly external?: readonly RouteTable[]; readonly internal?: readonly RouteTable[] };
  readonly tasks: readonly BackgroundTask[];
}

// Handlers see the infrastructure as `c.var.deps`; src/http/ declares only the part it reads.
declare module './http/env.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface AppDeps extends Deps {}
}
