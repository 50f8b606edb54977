import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
  type V1Pod,
  type V1Secret,
  type V1Service,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import type { Logger } from '../../../lib/logger.js';
import { SERVER_LABEL, type CrdCoordinates, type MinecraftServer } from './resource.js';
import { MANAGED_SELECTOR } from './workloads.js';

export const CACHED_KINDS = ['servers', 'statefulsets', 'pods', 'services', 'secrets'] as const;
export type CachedKind = (typeof CACHED_KINDS)[number];

interface KindOf {
  servers: MinecraftServer;
  statefulsets: V1StatefulSet;
  pods: V1Pod;
  services: V1Service;
  secrets: V1Secret;
}

export interface ClusterCachesOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  crd: CrdCoordinates;
  log?: Logger;
  /** The first wait before a failed list or watch is tried again; doubles up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

type ChangeListener = (kind: CachedKind, server: string) => void;

/**
 * Watch-fed caches (client-go's informers, as @kubernetes/client-node ships them) of every kind the
 * lifecycle controller reads: the MinecraftServers, and the StatefulSets, Pods, Services and RCON
 * Secrets the service made (labelled `app.kubernetes.io/managed-by=felis`). One list per kind at
 * start (and after a 410 Gone), then one watch each: the controller never lists or GETs per pass.
 * A failed list or watch is tried again after a doubling back-off; the cache keeps serving what it
 * holds meanwhile. Each change names the server it concerns to the listeners (`onChange`).
 *
 * The controller's own writes are `assume`d: the object the API answered is served until the
 * watch brings that version or a newer one, so a reconcile right after a write never acts on the
 * state from before it.
 */
export class ClusterCaches {
  readonly #o: ClusterCachesOptions;
  readonly #informers = new Map<CachedKind, Informer<KubernetesObject> & ObjectCache<KubernetesObject>>();
  readonly #synced = new Set<CachedKind>();
  readonly #assumed = new Map<CachedKind, Map<string, KubernetesObject>>();
  readonly #listeners = new Set<ChangeListener>();
  readonly #backoff = new Map<CachedKind, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #lists: Partial<Record<CachedKind, () => Promise<KubernetesListObject<KubernetesObject>>>> = {};
  #started = false;
  #stopped = false;

  constructor(options: ClusterCachesOptions) {
    this.#o = options;
  }

  /** Calls `listener` with the server each cached change concerns; returns the function that stops the calls. */
  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts the lists and watches (once; later calls do nothing). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#stopped = false;
    const { kubeConfig, namespace, crd } = this.#o;
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    const labelSelector = MANAGED_SELECTOR;
    const lists: Record<CachedKind, [string, () => Promise<KubernetesListObject<KubernetesObject>>, string | undefined]> = {
      servers: [
        `/apis/${crd.group}/${crd.version}/namespaces/${namespace}/${crd.plural}`,
        async () => (await custom.listNamespacedCustomObject({ ...crd, namespace })) as KubernetesListObject<KubernetesObject>,
        undefined,
      ],
      statefulsets: [`/apis/apps/v1/namespaces/${namespace}/statefulsets`, () => apps.listNamespacedStatefulSet({ namespace, labelSelector }), labelSelector],
      pods: [`/api/v1/namespaces/${namespace}/pods`, () => core.listNamespacedPod({ namespace, labelSelector }), labelSelector],
      services: [`/api/v1/namespaces/${namespace}/services`, () => core.listNamespacedService({ namespace, labelSelector }), labelSelector],
      secrets: [`/api/v1/namespaces/${namespace}/secrets`, () => core.listNamespacedSecret({ namespace, labelSelector }), labelSelector],
    };
    for (const kind of CACHED_KINDS) {
      const [path, list, selector] = lists[kind];
      this.#lists[kind] = list;
      const listed = async () => {
        const result = await list();
        // Synced once the list's items are in the cache (the informer adds them right after this resolves).
        setImmediate(() => this.#synced.add(kind));
        return result;
      };
      const informer = makeInformer<KubernetesObject>(kubeConfig, path, listed, selector);
      const changed = (object: KubernetesObject) => {
        this.#backoff.delete(kind);
        const name = serverOf(kind, object);
        if (!name) return;
        const assumed = this.#assumed.get(kind)?.get(object.metadata?.name ?? '');
        if (assumed && !newer(assumed, object)) this.#assumed.get(kind)!.delete(object.metadata?.name ?? '');
        for (const listener of this.#listeners) listener(kind, name);
      };
      informer.on('add', changed);
      informer.on('update', changed);
      informer.on('delete', (object) => {
        this.#assumed.get(kind)?.delete(object.metadata?.name ?? '');
        changed(object);
      });
      informer.on('error', (err: unknown) => this.#retry(kind, informer, err));
      this.#informers.set(kind, informer);
      informer.start().catch((err: unknown) => this.#retry(kind, informer, err));
    }
  }

  #retry(kind: CachedKind, informer: Informer<KubernetesObject>, err: unknown): void {
    if (this.#stopped) return;
    const delay = Math.min(this.#o.maxBackoffMs ?? 30_000, this.#backoff.has(kind) ? this.#backoff.get(kind)! * 2 : (this.#o.initialBackoffMs ?? 250));
    this.#backoff.set(kind, delay);
    this.#o.log?.warn({ err, kind, retry_ms: delay }, 'cluster cache: list or watch failed; trying again');
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#stopped) informer.start().catch((e: unknown) => this.#retry(kind, informer, e));
    }, delay);
    timer.unref();
    this.#timers.add(timer);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#started = false;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all([...this.#informers.values()].map((i) => i.stop()));
    this.#informers.clear();
    this.#synced.clear();
    this.#assumed.clear();
  }

  /** Every kind has been listed once: the caches can answer. */
  synced(): boolean {
    return this.#synced.size === CACHED_KINDS.length;
  }

  get<K extends CachedKind>(kind: K, name: string): KindOf[K] | undefined {
    const cached = this.#informers.get(kind)?.get(name, this.#o.namespace);
    const assumed = this.#assumed.get(kind)?.get(name);
    if (assumed && (!cached || newer(assumed, cached))) return assumed as KindOf[K];
    return cached as KindOf[K] | undefined;
  }

  list<K extends CachedKind>(kind: K): KindOf[K][] {
    const byName = new Map<string, KubernetesObject>();
    for (const object of this.#informers.get(kind)?.list(this.#o.namespace) ?? []) byName.set(object.metadata?.name ?? '', object);
    for (const [name, assumed] of this.#assumed.get(kind) ?? []) {
      const cached = byName.get(name);
      if (!cached || newer(assumed, cached)) byName.set(name, assumed);
    }
    return [...byName.values()] as KindOf[K][];
  }

  /** The API's answer to the controller's own write, served until the watch catches up with it. */
  assume<K extends CachedKind>(kind: K, object: KindOf[K]): KindOf[K] {
    const name = (object as KubernetesObject).metadata?.name;
    if (!name) return object;
    const assumed = this.#assumed.get(kind) ?? new Map<string, KubernetesObject>();
    this.#assumed.set(kind, assumed);
    assumed.set(name, object as KubernetesObject);
    return object;
  }

  /** The controller deleted it: gone from what it reads at once. */
  forget(kind: CachedKind, name: string): void {
    this.#assumed.get(kind)?.delete(name);
  }

  /**
   * Resolves once every cache holds what the API server holds now: one list per kind, then a wait
   * for the watches to bring each listed version (and each deletion). A barrier for tests and
   * tools (LifecycleController.tick), never on the controller's own path.
   */
  async catchUp(timeoutMs = 15_000): Promise<void> {
    this.start();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // Listed again each round: a write made meanwhile (the controller's own) is in the next list.
      const listed = await Promise.all(CACHED_KINDS.map(async (kind) => [kind, (await this.#lists[kind]!()).items] as const));
      const behind = listed.filter(([kind, items]) => {
        const names = new Set(items.map((i) => i.metadata?.name));
        if (this.list(kind).some((o) => !names.has(o.metadata?.name))) return true;
        return items.some((item) => {
          const cached = this.get(kind, item.metadata?.name ?? '') as KubernetesObject | undefined;
          return !cached || (cached.metadata?.resourceVersion !== item.metadata?.resourceVersion && !newer(cached, item));
        });
      });
      if (behind.length === 0 && this.synced()) return;
      if (Date.now() > deadline) {
        const detail = behind.map(([kind, items]) => {
          const names = new Set(items.map((i) => i.metadata?.name));
          const extra = this.list(kind).filter((o) => !names.has(o.metadata?.name)).map((o) => `+${o.metadata?.name}@${o.metadata?.resourceVersion}`);
          const stale = items
            .filter((i) => this.get(kind, i.metadata?.name ?? '')?.metadata?.resourceVersion !== i.metadata?.resourceVersion)
            .map((i) => `${i.metadata?.name}@${i.metadata?.resourceVersion}/${(this.get(kind, i.metadata?.name ?? '') as KubernetesObject | undefined)?.metadata?.resourceVersion}`);
          return `${kind} [${[...extra, ...stale].join(' ')}]`;
        });
        throw new Error(`cluster caches behind the API server: ${detail.join(', ')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Objects in each cache (the memory figure's companion). */
  sizes(): Record<CachedKind, number> {
    return Object.fromEntries(CACHED_KINDS.map((kind) => [kind, this.#informers.get(kind)?.list(this.#o.namespace).length ?? 0])) as Record<CachedKind, number>;
  }
}

/** The server an object belongs to: its own name for a server, its label otherwise (the RCON Secret's owner). */
function serverOf(kind: CachedKind, object: KubernetesObject): string | undefined {
  if (kind === 'servers') return object.metadata?.name;
  if (kind === 'secrets') return object.metadata?.ownerReferences?.find((o) => o.kind === 'MinecraftServer')?.name;
  return object.metadata?.labels?.[SERVER_LABEL];
}

/**
 * Whether `a` is a later version than `b`. Resource versions are opaque to clients, but etcd's
 * are its revisions, increasing integers (client-go's mutation cache compares them so too).
 */
function newer(a: KubernetesObject, b: KubernetesObject): boolean {
  const va = Number(a.metadata?.resourceVersion);
  const vb = Number(b.metadata?.resourceVersion);
  return Number.isFinite(va) && Number.isFinite(vb) && va > vb;
}
