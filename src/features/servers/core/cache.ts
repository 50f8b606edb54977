import type { AccessChanges } from './access.js';
import type { Queryable } from '../../../db/client.js';
import type { ClusterAdapter, ServerResource, ServerWatch, ServerWatchEvent } from '../../../adapters/cluster/types.js';
import { normalizeHost } from './names.js';
import type { ServerInfo } from './schema.js';
import { isReservedServer, isSystemServer, toServerInfo } from './views.js';

export interface CachedServer {
  resource: ServerResource;
  /** The ServerInfo view, built once per change so that the hot path only looks it up. */
  info: ServerInfo;
  /** Labelled a system service (views.ts). */
  system: boolean;
  /** A system server or a reserved name, which no player reaches (views.ts). */
  reserved: boolean;
  /** `info` as JSON text, encoded on its first answer (infoJsonOf): an entry is replaced, never changed. */
  infoJson?: string;
}

/**
 * The JSON text of a server's ServerInfo: encoded on the first answer after a change and then kept
 * with the entry, so the proxy's hot reads (by-host, status) answer with text already made.
 */
export function infoJsonOf(entry: CachedServer): string {
  return (entry.infoJson ??= JSON.stringify(entry.info));
}

const RELIST_DELAY_MS = 1_000;

/** A change the cache took in: the resource before (undefined: new) and after (undefined: deleted). */
export type ServerChangeListener = (before: ServerResource | undefined, after: ServerResource | undefined) => void;

/** A restart that ended: `server_restarts`' id, server and outcome. */
export interface EndedRestart {
  id: string;
  serverName: string;
  state: 'done' | 'failed';
  detail: string | null;
}
export type RestartEndedListener = (restart: EndedRestart) => Promise<void>;

/**
 * The server resources as the cluster's watch last reported them: the proxy's hot calls are answered
 * from here, never by a cluster round trip. List once, then watch from the list's version; when the
 * watch breaks (a real one does every few minutes), list again, answering from the last state
 * meanwhile: a re-list that fails or takes long must not turn the proxy's lookups into 503s.
 */
export class ServerCache {
  readonly #cluster: ClusterAdapter;
  readonly #rootDomain: string | undefined;
  #byName = new Map<string, CachedServer>();
  #byHost = new Map<string, CachedServer>();
  #watch: ServerWatch | undefined;
  #syncing: Promise<void> | undefined;
  #closed = false;
  #synced = false;
  #relisting = false;
  readonly #desiredStateListeners = new Set<(name: string) => void>();
  readonly #changeListeners = new Set<ServerChangeListener>();
  readonly #restartEndedListeners = new Set<RestartEndedListener>();

  constructor(cluster: ClusterAdapter, rootDomain: string | undefined) {
    this.#cluster = cluster;
    this.#rootDomain = rootDomain?.toLowerCase();
  }

  /** A list has been read: the cache answers, from its last state while it re-lists. */
  get synced(): boolean {
    return this.#synced;
  }

  /** The watch broke and the cache is listing again (until then its state may be behind). */
  get relisting(): boolean {
    return this.#relisting;
  }

  /** Resolves once the first list is in; a failed list rejects and the next call tries again. */
  ready(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    this.#syncing ??= this.#sync().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  close(): void {
    this.#closed = true;
    this.#watch?.stop();
  }

  /**
   * Calls `listener` with a server's name when a watch event changes what it should be (running or
   * stopped), a new server included: the lifecycle controller acts on wakes at once this way.
   * Returns the function that stops the calls.
   */
  onDesiredStateChange(listener: (name: string) => void): () => void {
    this.#desiredStateListeners.add(listener);
    return () => this.#desiredStateListeners.delete(listener);
  }

  /**
   * Calls `listener` with a server's resource before and after each change the cache takes in
   * (undefined before: new; undefined after: deleted), from the watch and from a re-list alike:
   * metrics and notifications see transitions (a start that failed, a wake that became ready)
   * without a query. Returns the function that stops the calls.
   */
  onChange(listener: ServerChangeListener): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /**
   * Calls `listener` when a restart this process moved ends (done or failed, an emergency stop's
   * end included), with the restart's row: a schedule that asked for it finishes its run then,
   * on whichever replica ended the restart, not a polling round later. Returns the function that
   * stops the calls. (The servers feature's one in-process event besides the watch's.)
   */
  onRestartEnded(listener: RestartEndedListener): () => void {
    this.#restartEndedListeners.add(listener);
    return () => this.#restartEndedListeners.delete(listener);
  }

  /** Tells the listeners a restart ended; a listener's failure is its own (each catches and logs). */
  async restartEnded(restart: EndedRestart): Promise<void> {
    await Promise.allSettled([...this.#restartEndedListeners].map((listener) => listener(restart)));
  }

  get(name: string): CachedServer | undefined {
    return this.#byName.get(name);
  }

  /** `subdomain.ROOT_DOMAIN` or the bare subdomain, any case, with or without port and trailing dot. */
  byHost(host: string): CachedServer | undefined {
    return this.#byHost.get(normalizeHost(host));
  }

  all(): IterableIterator<CachedServer> {
    return this.#byName.values();
  }

  get size(): number {
    return this.#byName.size;
  }

  async #sync(): Promise<void> {
    this.#watch?.stop();
    const list = await this.#cluster.listServers();
    const before = this.#changeListeners.size > 0 ? new Map(this.#byName) : undefined;
    this.#byName.clear();
    this.#byHost.clear();
    for (const resource of list.servers) this.#put(resource);
    if (before) {
      for (const resource of list.servers) this.#changed(before.get(resource.spec.name)?.resource, resource);
      for (const [name, old] of before) if (!this.#byName.has(name)) this.#changed(old.resource, undefined);
    }
    this.#watch = this.#cluster.watchServers(
      list.resourceVersion,
      (event) => this.#apply(event),
      () => this.#relist(),
    );
    this.#synced = true;
  }

  #relist(): void {
    if (this.#closed) return;
    this.#relisting = true;
    setTimeout(() => {
      if (this.#closed) return;
      this.#sync().then(
        () => (this.#relisting = false),
        () => this.#relist(),
      );
    }, RELIST_DELAY_MS).unref();
  }

  #apply(event: ServerWatchEvent): void {
    if (event.type === 'DELETED') {
      const old = this.#byName.get(event.name)?.resource;
      this.#remove(event.name);
      if (old) this.#changed(old, undefined);
      return;
    }
    const previous = this.#byName.get(event.server.spec.name)?.resource;
    const before = previous?.spec.desiredState;
    this.#put(event.server);
    this.#changed(previous, event.server);
    if (before === event.server.spec.desiredState) return;
    for (const listener of this.#desiredStateListeners) listener(event.server.spec.name);
  }

  #changed(before: ServerResource | undefined, after: ServerResource | undefined): void {
    if (before === after) return;
    for (const listener of this.#changeListeners) {
      try {
        listener(before, after);
      } catch {
        // A listener's failure must not break the cache that the proxy's lookups read.
      }
    }
  }

  #put(resource: ServerResource): void {
    this.#remove(resource.spec.name);
    const entry: CachedServer = { resource, info: toServerInfo(resource), system: isSystemServer(resource), reserved: isReservedServer(resource) };
    this.#byName.set(resource.spec.name, entry);
    for (const host of this.#hostsOf(resource)) this.#byHost.set(host, entry);
  }

  #remove(name: string): void {
    const old = this.#byName.get(name);
    if (!old) return;
    this.#byName.delete(name);
    for (const host of this.#hostsOf(old.resource)) {
      if (this.#byHost.get(host) === old) this.#byHost.delete(host);
    }
  }

  #hostsOf(resource: ServerResource): string[] {
    const sub = resource.spec.subdomain.toLowerCase();
    return this.#rootDomain ? [sub, `${sub}.${this.#rootDomain}`] : [sub];
  }
}

/** Whether a node's maintenance or a move holds a server down: the nodes feature's rows, its answer (nodes/guard.ts). */
export interface NodeGuard {
  /** 409 node_operation_busy while the server's pinned node is under maintenance. */
  refuseOnNodeInMaintenance(db: Queryable, server: CachedServer): Promise<void>;
  /** Whether a move of the server is still running. */
  moveRunning(db: Queryable, serverName: string): Promise<boolean>;
}

/**
 * The servers feature's part of the service: the one cache of the cluster's servers of this
 * process (made by `createServersParts` with the cluster, filled by `startServersFeature`, closed
 * by the servers module's closing task).
 */
export interface ServersParts {
  serverCache: ServerCache;
  /** What the nodes feature (above servers) says of a server's node and moves: a start is refused while either holds it. */
  nodeGuard: NodeGuard;
  /** Tells open console streams that a server's members changed (absent: they find out at their next re-check). */
  accessChanges?: AccessChanges;
}
