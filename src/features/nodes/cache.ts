import type { ClusterNodes, NodeResource, NodeWatchEvent } from '../../adapters/cluster/nodes.js';
import type { ServerWatch } from '../../adapters/cluster/types.js';

const RELIST_DELAY_MS = 1_000;

/**
 * The cluster's nodes as its watch last reported them (list, then watch from the list's version,
 * list again when the watch ends), like the server cache: GET /nodes never waits on the cluster
 * once the first list is in.
 */
export class NodeCache {
  readonly #nodes: ClusterNodes;
  #byName = new Map<string, NodeResource>();
  #watch: ServerWatch | undefined;
  #syncing: Promise<void> | undefined;
  #synced = false;
  #closed = false;

  constructor(nodes: ClusterNodes) {
    this.#nodes = nodes;
  }

  get synced(): boolean {
    return this.#synced;
  }

  ready(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    this.#syncing ??= this.#sync().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  get(name: string): NodeResource | undefined {
    return this.#byName.get(name);
  }

  all(): NodeResource[] {
    return [...this.#byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  close(): void {
    this.#closed = true;
    this.#watch?.stop();
  }

  async #sync(): Promise<void> {
    this.#watch?.stop();
    const list = await this.#nodes.listNodes();
    this.#byName = new Map(list.nodes.map((n) => [n.name, n]));
    this.#watch = this.#nodes.watchNodes(list.resourceVersion, (event) => this.#apply(event), () => this.#relist());
    this.#synced = true;
  }

  #relist(): void {
    if (this.#closed) return;
    setTimeout(() => {
      if (this.#closed) return;
      this.#sync().catch(() => this.#relist());
    }, RELIST_DELAY_MS).unref();
  }

  #apply(event: NodeWatchEvent): void {
    if (event.type === 'DELETED') this.#byName.delete(event.name);
    else this.#byName.set(event.node.name, event.node);
  }
}

/**
 * What the nodes feature makes and others are handed: the cache of the cluster's nodes (undefined
 * on a cluster that reports no nodes). Made by `createNodesParts` with the cluster; its watch
 * starts on the first read and is closed by the nodes module's closing task.
 */
export interface NodesParts {
  nodeCache: NodeCache | undefined;
}

/**
 * The nodes feature's part for a cluster: its node cache, when the cluster reports nodes. `given`
 * replaces it (tests and benches hand their own).
 */
export function createNodesParts(infrastructure: { cluster: { nodes?: ClusterNodes } }, given: Partial<NodesParts> = {}): NodesParts {
  const { nodes } = infrastructure.cluster;
  return { nodeCache: given.nodeCache ?? (nodes ? new NodeCache(nodes) : undefined) };
}
