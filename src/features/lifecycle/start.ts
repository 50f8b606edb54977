import type { KubernetesCluster } from '../../adapters/cluster/kubernetes/adapter.js';
import { RconConnection } from '../../adapters/rcon/client.js';
import type { Deps } from '../../deps.js';
import { LifecycleController } from './controller.js';
import { Leadership } from '../../coordination/index.js';

/**
 * The lifecycle controller of this replica. It acts only while this replica leads: the
 * `controller` leadership lease in the database every replica shares (src/coordination).
 */
export function createLifecycle(deps: Pick<Deps, 'clock' | 'log' | 'database' | 'metrics' | 'replica'>, cluster: KubernetesCluster): LifecycleController {
  const { clock } = deps;
  const lock = new Leadership({ db: deps.database.db, clock, replica: deps.replica }, { name: 'controller' });
  const controller = new LifecycleController({
    cluster,
    lock,
    rcon: (endpoint, timeoutMs) => RconConnection.open(endpoint, { connectTimeoutMs: timeoutMs, commandTimeoutMs: timeoutMs }),
    clock,
    log: deps.log.child({ component: 'lifecycle' }),
    registry: deps.metrics.registry,
  });
  return controller;
}
