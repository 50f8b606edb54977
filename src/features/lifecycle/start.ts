import { hostname } from 'node:os';
import type { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { RconConnection } from '../../adapters/rcon/client.js';
import type { Deps } from '../../deps.js';
import { LifecycleController } from './controller.js';
import { AdvisoryLock, LeaseLock, type LeaderLock } from './leader.js';

/**
 * Starts the lifecycle controller on this replica. It acts only while it holds the lock: the
 * PostgreSQL advisory lock when the database is PostgreSQL (shared by every replica), else a Lease
 * in the cluster (an embedded database is one per replica, so it cannot arbitrate).
 */
export function startLifecycle(deps: Pick<Deps, 'config' | 'clock' | 'log' | 'database' | 'metrics'>, cluster: KubernetesCluster): LifecycleController {
  const { config, clock } = deps;
  const lock: LeaderLock =
    deps.database.kind === 'postgres' && config.databaseUrl
      ? new AdvisoryLock({ url: config.databaseUrl, clock })
      : new LeaseLock({ kubeConfig: cluster.kubeConfig, namespace: cluster.namespace, identity: config.podName ?? hostname(), clock });
  const controller = new LifecycleController({
    cluster,
    lock,
    rcon: (endpoint, timeoutMs) => RconConnection.open(endpoint, { connectTimeoutMs: timeoutMs, commandTimeoutMs: timeoutMs }),
    clock,
    log: deps.log.child({ component: 'lifecycle' }),
    registry: deps.metrics.registry,
  });
  controller.start();
  return controller;
}
