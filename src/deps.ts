import type { ClusterAdapter } from './adapters/cluster/types.js';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import type { SessionVerifier } from './features/verifier/service.js';
import type { Metrics } from './http/metrics.js';
import type { SessionAuthenticator } from './http/session.js';
import type { Clock } from './lib/clock.js';
import type { Logger } from './lib/logger.js';
import type { RandomSource } from './lib/random.js';

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
  metrics: Metrics;
  /** Provided by the accounts feature; without it the app and admin tiers refuse everyone. */
  sessions?: SessionAuthenticator;
  /** The hasJoined verifier (keep-alive clients, name cache); built from config when absent. */
  sessionVerifier?: SessionVerifier;
  /** Aborted when the process begins to shut down: long-lived streams end on it. */
  shutdown: AbortSignal;
}
