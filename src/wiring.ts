import { SimulatedCluster } from './adapters/cluster/simulated.js';
import type { ClusterAdapter } from './adapters/cluster/types.js';
import { createMail } from './adapters/mail/index.js';
import { RconPool } from './adapters/rcon/pool.js';
import { OciRegistry } from './adapters/registry/oci.js';
import { StaticRegistry } from './adapters/registry/static.js';
import type { RegistryAdapter } from './adapters/registry/types.js';
import type { Config } from './config.js';
import type { Deps } from './deps.js';
import { SimulatedBuildRunner } from './features/builds/simulated-runner.js';
import { DirectoryContextStore } from './features/submissions/context-store.js';
import { join } from 'node:path';
import { createSessionAuthenticator } from './features/accounts/authenticator.js';
import { LogHubs } from './features/console/log-hub.js';
import { withPasswordChangeGate } from './features/accounts/password-change-gate.js';
import { passkeyDirectory } from './features/passkeys/credentials.js';
import { countServersByOwner } from './features/servers/claims.js';
import { createSessionVerifier } from './features/verifier/service.js';
import { createWorldsRuntime } from './features/worlds/runtime.js';
import { createMetrics } from './http/metrics.js';
import { systemClock } from './lib/clock.js';
import { cryptoRandom } from './lib/random.js';

export function createRegistry(config: Config): RegistryAdapter {
  if (!config.registryUrl) return new StaticRegistry();
  return new OciRegistry({ url: config.registryUrl, username: config.registryUsername, password: config.registryPassword });
}

export type DepsParts = Pick<Deps, 'config' | 'log' | 'database'> & Partial<Omit<Deps, 'config' | 'log' | 'database'>>;

/**
 * The one place that assembles Deps: the service (server.ts), the test harness, the benches and
 * the process fixtures all start here and override only what they must, so a new dependency is
 * wired everywhere at once. Defaults: system clock and randomness, a bare simulated cluster, the
 * configured registry, mail and session sources, the real session authenticator.
 */
export function assembleDeps(parts: DepsParts): Deps {
  const clock = parts.clock ?? systemClock;
  const cluster: ClusterAdapter = parts.cluster ?? new SimulatedCluster({ clock });
  const metrics = parts.metrics ?? createMetrics();
  return {
    random: cryptoRandom,
    registry: createRegistry(parts.config),
    mail: createMail(parts.config, parts.log),
    sessions: withPasswordChangeGate(createSessionAuthenticator()),
    serverCounts: countServersByOwner,
    passkeys: passkeyDirectory,
    shutdown: new AbortController().signal,
    contextStore: new DirectoryContextStore(join(parts.config.dataDir, 'contexts')),
    // The cluster's job runner is wired by server.ts for CLUSTER=kubernetes.
    buildRunner:
      cluster.kind === 'simulated'
        ? new SimulatedBuildRunner({ clock, onError: (err, job) => parts.log.warn({ err, buildId: job.buildId }, 'simulated build job failed') })
        : undefined,
    ...parts,
    clock,
    cluster,
    metrics,
    rcon: parts.rcon ?? new RconPool((name) => cluster.rconEndpoint(name)),
    consoleLogs: parts.consoleLogs ?? new LogHubs({ cluster, clock, log: parts.log }),
    sessionVerifier: parts.sessionVerifier ?? createSessionVerifier({ ...parts, clock, metrics }),
    worlds: parts.worlds ?? createWorldsRuntime(parts.config, cluster, { log: parts.log, signal: parts.shutdown, clock }),
  };
}

