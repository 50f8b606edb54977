import type { ClusterAdapter } from './types.js';

/** An in-process cluster for `npm start` without Kubernetes and for tests. */
export class SimulatedCluster implements ClusterAdapter {
  readonly kind = 'simulated' as const;
  #down = false;

  /** Makes the cluster unreachable (tests of the 503 paths). */
  setReachable(reachable: boolean): void {
    this.#down = !reachable;
  }

  async ping(): Promise<void> {
    if (this.#down) throw new Error('simulated cluster is unreachable');
  }

  async close(): Promise<void> {}
}
