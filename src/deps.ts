import type { BackupStore } from './adapters/backup-store/types.js';
import type { ClusterAdapter } from './adapters/cluster/types.js';
import type { MailAdapter } from './adapters/mail/types.js';
import type { RconPool } from './adapters/rcon/pool.js';
import type { RegistryAdapter } from './adapters/registry/types.js';
import type { Config } from './config.js';
import type { ReplicaHeartbeat } from './coordination/index.js';
import type { LogHubs } from './features/console/index.js';
import type { DatabaseHandle, Queryable } from './db/client.js';
import type { BuildRunner, ContextStore } from './features/builds/index.js';
import type { SessionVerifier } from './features/verifier/index.js';
import type { WorldsRuntime } from './features/worlds/index.js';
import type { Metrics } from './http/metrics.js';
import type { RequestChange } from './http/env.js';
import type { SessionAuthenticator } from './http/session.js';
import type { Clock } from './lib/clock.js';
import type { Logger } from './lib/logger.js';
import type { RandomSource } from './lib/random.js';

/** What the accounts feature needs of the passkey feature's table. */
export interface PasskeyDirectory {
  count(db: Queryable, userId: string): Promise<number>;
  /** Removes every passkey of a user; returns how many. */
  removeAll(db: Queryable, userId: string): Promise<number>;
}

/**
 * Everything a handler may reach, built once in main.ts (or by a test) and handed to the apps.
 * Features take what they need from here; nothing lives in module-level singletons.
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
  /** Provided by the accounts feature; without it the app and admin tiers refuse everyone. */
  sessions?: SessionAuthenticator;
  /**
   * How many servers each user owns, for the admin user list; provided by the servers feature.
   * Absent: every count is 0.
   */
  serverCounts?: (db: Queryable, userIds: string[]) => Promise<Map<string, number>>;
  /**
   * Passkeys of accounts, provided by the passkey feature. Absent: nobody has a passkey (setup
   * state reports none, removing them all removes nothing).
   */
  passkeys?: PasskeyDirectory;
  /** The hasJoined verifier (keep-alive clients to the session sources, name cache, bar-list snapshot). */
  sessionVerifier: SessionVerifier;
  /** Runs image builds as jobs; absent: build routes answer 503. */
  buildRunner?: BuildRunner;
  /** Where submission contexts are staged and stored; absent: upload routes answer 503. */
  contextStore?: ContextStore;
  /**
   * Bytes in flight that any replica may be asked to continue (world upload parts): the bucket when
   * one is configured, else a folder under DATA_DIR (src/adapters/backup-store `createStagingStore`).
   */
  staging: BackupStore;
  /** One RCON connection per server, reused by every console command (password from the server's secret). */
  rcon: RconPool;
  /** The console's log streams on this replica: one followed pod log per server, shared by its viewers. */
  consoleLogs: LogHubs;
  /** World archives (the backup store), world folders and the world jobs of this process. */
  worlds: WorldsRuntime;
  /** Records each signed-in state-changing request in the audit log (features/audit's changeRecorder). */
  recordChange?: (change: RequestChange) => void;
  /** This process's name as a lease holder (src/coordination): unique per replica and per life. */
  replica: string;
  /** This replica's heartbeat, and its judgement of which other replicas died (src/coordination). */
  heartbeat: ReplicaHeartbeat;
  /** Aborted when the process begins to shut down: long-lived streams end on it. */
  shutdown: AbortSignal;
}

// Handlers see every dependency as `c.var.deps`; src/http/ declares only the part it reads.
declare module './http/env.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface AppDeps extends Deps {}
}
