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

const caches = new WeakMap<ClusterNodes, NodeCache>();

/** The one node cache of a cluster's nodes (per process, or per test's deps). */
export function nodeCacheOf(nodes: ClusterNodes): NodeCache {
  let cache = caches.get(nodes);
  if (!cache) {
    cache = new NodeCache(nodes);
    caches.set(nodes, cache);
  }
  return cache;
}
