import {
  ApiException,
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Job,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1Service,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { systemClock, type Clock } from '../../../lib/clock.js';
import type { Logger } from '../../../lib/logger.js';
import { cryptoRandom, type RandomSource } from '../../../lib/random.js';
import type { RconEndpoint } from '../../rcon/client.js';
import {
  ClusterConflictError,
  ClusterNoPodError,
  ClusterNotFoundError,
  type ClusterAdapter,
  type ClusterCapacity,
  type ClusterTask,
  type ClusterTaskDeps,
  type DesiredState,
  type PodLogLine,
  type PodLogOptions,
  type PodUsage,
  type ServerList,
  type ServerResource,
  type ServerSpec,
  type ServerSpecPatch,
  type ServerWatch,
  type ServerWatchEvent,
} from '../types.js';
import { buildJobOptionsFor, KubernetesBuildJobs } from './build-jobs.js';
import { lifecycleTask } from './controller.js';
import type { ClusterWorldJobs, WorldJobSettings } from '../world-jobs.js';
import { followPodLog } from './pod-log.js';
import {
  DEFAULT_CRD,
  MINECRAFT_SERVER_KIND,
  isSystem,
  rconSecretName,
  SERVER_LABEL,
  toMinecraftServer,
  toServerResource,
  toSpecPatch,
  type CrdCoordinates,
  type MinecraftServer,
  type MinecraftServerSpec,
  type MinecraftServerStatus,
} from './resource.js';
import { ClusterCaches } from './informers.js';
import { resumableWatch, type WatchEventType } from './watch.js';
import { appliedStatefulSet, MANAGED_SELECTOR, RCON_PORT, SERVER_CONTAINER } from './workloads.js';
import { quantityBytes } from '../quantity.js';
import { KubernetesWorldFileOps } from './world-files.js';
import { KubernetesWorldJobRunner } from './world-jobs.js';
import { KubernetesNodes } from './nodes.js';
import { KubernetesWorldVolumes, worldVolumeOf } from './world-volumes.js';
import { defaultWorldClaim, type WorldVolumeRef } from '../world-volumes.js';

const CONFLICT_RETRIES = 5;
/** An event repeated within this long raises the first one's count (client-go's correlator window). */
const EVENT_AGGREGATION_MS = 10 * 60_000;
/** Events remembered for aggregation (the oldest forgotten first). */
const EVENT_CACHE_SIZE = 4096;
/** Who an Event says it comes from: the lifecycle controller, or node control (node tasks and moves). */
const LIFECYCLE_COMPONENT = 'lifecycle-controller';
const NODE_CONTROL_COMPONENT = 'node-control';

export interface KubernetesClusterOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  crd?: CrdCoordinates;
  clock?: Clock;
  random?: RandomSource;
  log?: Logger;
  /** Label selector of the nodes that host game servers; every ready, schedulable node when unset. */
  gameNodeSelector?: string;
  /** Where RCON is reached; the server's Service in the namespace by default. */
  rconAddress?: (name: string, namespace: string) => { host: string; port: number };
  watchBackoffMs?: { initial: number; max: number };
  /** The world volumes are network storage that every node mounts (nodes.ts `sharedVolumes`). */
  sharedWorldVolumes?: boolean;
  /** How long a pod log request may wait for the first answer (pod-log.ts POD_LOG_ANSWER_MS by default). */
  podLogAnswerMs?: number;
  /**
   * The operator accepted the Minecraft EULA (KUBE_EULA=true): the game pods get EULA=TRUE, and
   * only then does the controller start one. False (the default): every start gives up saying so.
   */
  eula?: boolean;
}

/**
 * The one name the service writes under: every object it owns shows it in `metadata.managedFields`
 * (server-side apply of the workloads, and the merge patches of a server's spec and status).
 */
export const FIELD_MANAGER = 'felis-control-plane';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const serverSideApply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/** Maps the API's 404 and 409 to the adapter's errors; everything else passes through. */
function translate(err: unknown, what: string): never {
  const status = statusOf(err);
  if (status === 404) throw new ClusterNotFoundError(`${what} not found`, { cause: err });
  if (status === 409) throw new ClusterConflictError(`${what}: conflict`, { cause: err });
  throw err;
}

export function isNotFound(err: unknown): boolean {
  return statusOf(err) === 404 || err instanceof ClusterNotFoundError;
}

/**
 * The cluster adapter on a real Kubernetes API: servers are MinecraftServer custom resources in one
 * namespace; the lifecycle controller (controller.ts), this adapter's task, turns them into
 * StatefulSets and Services through the workload methods here.
 */
export class KubernetesCluster implements ClusterAdapter {
  readonly kind = 'kubernetes' as const;
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly crd: CrdCoordinates;
  readonly builds: KubernetesBuildJobs;
  readonly nodes: KubernetesNodes;
  /** KubernetesClusterOptions `eula`. */
  readonly eula: boolean;
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;
  readonly #apps: AppsV1Api;
  readonly #batch: BatchV1Api;
  readonly #clock: Clock;
  readonly #random: RandomSource;
  readonly #log: Logger | undefined;
  readonly #options: KubernetesClusterOptions;
  readonly #watches = new Set<ServerWatch>();
  /** Recent events by what they say, to aggregate repeats (recordServerEvent). */
  readonly #events = new Map<string, { name: string; count: number; last: number }>();
  /** Watch-fed caches of what the controller reads (informers.ts); started by the controller or the first read that uses them. */
  readonly caches: ClusterCaches;

  constructor(options: KubernetesClusterOptions) {
    this.#options = options;
    this.kubeConfig = options.kubeConfig;
    this.namespace = options.namespace;
    this.crd = options.crd ?? DEFAULT_CRD;
    this.eula = options.eula ?? false;
    this.#custom = this.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#core = this.kubeConfig.makeApiClient(CoreV1Api);
    this.#apps = this.kubeConfig.makeApiClient(AppsV1Api);
    this.#batch = this.kubeConfig.makeApiClient(BatchV1Api);
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? cryptoRandom;
    this.#log = options.log;
    this.caches = new ClusterCaches({ kubeConfig: this.kubeConfig, namespace: this.namespace, crd: this.crd, log: options.log, initialBackoffMs: options.watchBackoffMs?.initial, maxBackoffMs: options.watchBackoffMs?.max });
    this.builds = new KubernetesBuildJobs(this, buildJobOptionsFor(this.namespace));
    this.nodes = new KubernetesNodes({
      kubeConfig: this.kubeConfig,
      namespace: this.namespace,
      patchServerSpec: (name, spec) => this.patchServerSpec(name, spec as Partial<MinecraftServerSpec>),
      getServerObject: (name) => this.getServerObject(name),
      recordServerEvent: (server, type, reason, message) => this.recordServerEvent(server, type, reason, message, NODE_CONTROL_COMPONENT),
      sharedVolumes: options.sharedWorldVolumes,
      volumes: new KubernetesWorldVolumes({
        kubeConfig: this.kubeConfig,
        namespace: this.namespace,
        getServerObject: (name) => this.getServerObject(name),
        patchServerSpec: (name, spec) => this.patchServerSpec(name, spec as Partial<MinecraftServerSpec>),
        log: options.log,
      }),
      log: options.log,
    });
  }

  get #crdParams() {
    return { ...this.crd, namespace: this.namespace };
  }

  /** The collection path of the custom resource (for watches). */
  get serversPath(): string {
    return `/apis/${this.crd.group}/${this.crd.version}/namespaces/${this.namespace}/${this.crd.plural}`;
  }

  async ping(): Promise<void> {
    await this.#custom.listNamespacedCustomObject({ ...this.#crdParams, limit: 1 });
  }

  cachesSynced(): boolean {
    return this.caches.synced();
  }

  /** The caches hold what the API server holds now (LifecycleController.tick's barrier). */
  catchUp(): Promise<void> {
    return this.caches.catchUp();
  }

  async close(): Promise<void> {
    await this.caches.stop();
    for (const watch of this.#watches) watch.stop();
    this.#watches.clear();
  }

  // ---- servers (the custom resource) ----

  async listServerObjects(): Promise<{ items: MinecraftServer[]; resourceVersion: string }> {
    const list = (await this.#custom.listNamespacedCustomObject(this.#crdParams)) as {
      items: MinecraftServer[];
      metadata: { resourceVersion: string };
    };
    return { items: list.items, resourceVersion: list.metadata.resourceVersion };
  }

  async listServers(): Promise<ServerList> {
    const { items, resourceVersion } = await this.listServerObjects();
    return { servers: items.map(toServerResource), resourceVersion };
  }

  watchServers(resourceVersion: string, onEvent: (event: ServerWatchEvent) => void, onError: (err: Error) => void): ServerWatch {
    return this.watchServerObjects(
      resourceVersion,
      (type, object) =>
        onEvent(
          type === 'DELETED'
            ? { type, name: object.metadata.name, resourceVersion: object.metadata.resourceVersion ?? '' }
            : { type, server: toServerResource(object) },
        ),
      onError,
    );
  }

  /** The raw watch of the custom resource; resumes on its own after a dropped stream. */
  watchServerObjects(
    resourceVersion: string,
    onEvent: (type: WatchEventType, object: MinecraftServer) => void,
    onExpired: (err: Error) => void,
  ): ServerWatch {
    const watch = resumableWatch<MinecraftServer>({
      kubeConfig: this.kubeConfig,
      path: this.serversPath,
      fromVersion: resourceVersion,
      onEvent,
      onExpired: (err) => {
        this.#watches.delete(handle);
        onExpired(err);
      },
      log: this.#log,
      initialBackoffMs: this.#options.watchBackoffMs?.initial,
      maxBackoffMs: this.#options.watchBackoffMs?.max,
    });
    const handle: ServerWatch = {
      stop: () => {
        watch.stop();
        this.#watches.delete(handle);
      },
    };
    this.#watches.add(handle);
    return handle;
  }

  async getServerObject(name: string): Promise<MinecraftServer> {
    try {
      return (await this.#custom.getNamespacedCustomObject({ ...this.#crdParams, name })) as MinecraftServer;
    } catch (err) {
      translate(err, `server ${name}`);
    }
  }

  async createServer(spec: ServerSpec): Promise<ServerResource> {
    let created: MinecraftServer;
    try {
      created = (await this.#custom.createNamespacedCustomObject({
        ...this.#crdParams,
        body: toMinecraftServer(spec, this.crd, this.namespace),
        fieldManager: FIELD_MANAGER,
      })) as MinecraftServer;
    } catch (err) {
      translate(err, `server ${spec.name}`);
    }
    await this.#createRconSecret(created);
    return toServerResource(created);
  }

  /** A random RCON password in a Secret owned by the server (deleted with it). */
  async #createRconSecret(server: MinecraftServer): Promise<void> {
    const password = Buffer.from(this.#random.bytes(24)).toString('base64url');
    try {
      await this.#core.createNamespacedSecret({
        namespace: this.namespace,
        body: {
          metadata: {
            name: rconSecretName(server.metadata.name),
            labels: { 'app.kubernetes.io/managed-by': 'felis' },
            ownerReferences: [
              {
                apiVersion: `${this.crd.group}/${this.crd.version}`,
                kind: MINECRAFT_SERVER_KIND,
                name: server.metadata.name,
                uid: server.metadata.uid ?? '',
              },
            ],
          },
          type: 'Opaque',
          stringData: { password },
        },
        fieldManager: FIELD_MANAGER,
      });
    } catch (err) {
      // A Secret left by an earlier server of this name keeps its password.
      if (statusOf(err) !== 409) throw err;
    }
  }

  async #patchServer(name: string, patch: object, status: boolean): Promise<MinecraftServer> {
    // A merge patch names only the fields it changes, so a concurrent write elsewhere never makes it
    // stale; a 409 (the API server's own optimistic-concurrency retry ran out) is simply sent again.
    for (let attempt = 1; ; attempt += 1) {
      try {
        const params = { ...this.#crdParams, name, body: patch, fieldManager: FIELD_MANAGER };
        return (await (status
          ? this.#custom.patchNamespacedCustomObjectStatus(params, mergePatch)
          : this.#custom.patchNamespacedCustomObject(params, mergePatch))) as MinecraftServer;
      } catch (err) {
        if (statusOf(err) === 409 && attempt < CONFLICT_RETRIES) continue;
        translate(err, `server ${name}`);
      }
    }
  }

  /**
   * Sets a server's finalizers, as of the version read (`resourceVersion`): a write over a newer
   * version is refused (ClusterConflictError) rather than dropping a finalizer someone else added.
   */
  async setServerFinalizers(name: string, finalizers: string[], resourceVersion: string): Promise<MinecraftServer> {
    try {
      return (await this.#custom.patchNamespacedCustomObject(
        { ...this.#crdParams, name, body: { metadata: { finalizers, resourceVersion } }, fieldManager: FIELD_MANAGER },
        mergePatch,
      )) as MinecraftServer;
    } catch (err) {
      translate(err, `server ${name}`);
    }
  }

  patchServerSpec(name: string, spec: Partial<MinecraftServerSpec>): Promise<MinecraftServer> {
    return this.#patchServer(name, { spec }, false);
  }

  /** Merges into the status subresource; a field set to null is removed. */
  patchServerStatus(name: string, status: { [K in keyof MinecraftServerStatus]?: MinecraftServerStatus[K] | null }): Promise<MinecraftServer> {
    return this.#patchServer(name, { status }, true);
  }

  async setDesiredState(name: string, state: DesiredState): Promise<ServerResource> {
    return toServerResource(await this.patchServerSpec(name, { desiredState: state }));
  }

  async updateServer(name: string, patch: ServerSpecPatch): Promise<ServerResource> {
    return toServerResource(await this.patchServerSpec(name, toSpecPatch(patch)));
  }

  /** Deletes the resource; its StatefulSet, Service and Secret go with it (owner references). */
  async removeServer(name: string): Promise<void> {
    try {
      await this.#custom.deleteNamespacedCustomObject({ ...this.#crdParams, name });
    } catch (err) {
      translate(err, `server ${name}`);
    }
  }

  async emergencyStop(name: string): Promise<ServerResource> {
    // The intent first, so the controller never starts it again; then the workload and its pod,
    // without the controller's clean save and without the pod's shutdown grace.
    const stopped = await this.setDesiredState(name, 'Stopped');
    await this.scaleStatefulSet(name, 0).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
    await this.deletePod(podName(name), { graceSeconds: 0 });
    return stopped;
  }

  async recreatePod(name: string): Promise<ServerResource> {
    const server = await this.getServerObject(name);
    const running = server.spec.desiredState === 'Running';
    const updated = await this.patchServerStatus(name, {
      autoRestarts: 0,
      startGaveUp: false,
      retryAt: null,
      ...(running ? { phase: 'Starting', startedAt: this.#clock.now().toISOString(), ready: false, firstReadyAt: null } : {}),
    });
    // A fresh start: the set at one replica with the pod template of the spec as it is now (the pod
    // is made again just below). Not before the operator accepted the EULA: the controller's start
    // then gives up saying so.
    if (running && this.eula) {
      const set = await this.getStatefulSet(name);
      if (set) await this.applyStatefulSet(appliedStatefulSet(server, this.crd, 1, set, true, this.eula));
    }
    await this.deletePod(podName(name));
    return toServerResource(updated);
  }

  async reportReady(name: string): Promise<void> {
    const server = await this.getServerObject(name);
    if (server.status?.phase === 'Running' && server.status.ready !== true) await this.patchServerStatus(name, { ready: true });
  }

  /**
   * The server pods' usage from the metrics API (metrics.k8s.io, served by metrics-server): summed
   * over each pod's containers. Undefined when the cluster serves no metrics API (404).
   */
  async podUsage(): Promise<Map<string, PodUsage> | undefined> {
    let list: { items?: Array<{ metadata?: { labels?: Record<string, string> }; containers?: Array<{ usage?: Record<string, string> }> }> };
    try {
      list = (await this.#custom.listNamespacedCustomObject({
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        namespace: this.namespace,
        plural: 'pods',
        labelSelector: MANAGED_SELECTOR,
      })) as typeof list;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
    const usage = new Map<string, PodUsage>();
    for (const pod of list.items ?? []) {
      const server = pod.metadata?.labels?.[SERVER_LABEL];
      if (!server) continue;
      let cpu = 0;
      let memory = 0;
      for (const container of pod.containers ?? []) {
        cpu += usageCpuMilli(container.usage?.cpu ?? '0');
        memory += (quantityBytes(container.usage?.memory ?? '0') ?? 0) / 1024 ** 2;
      }
      usage.set(server, { cpuMilli: Math.round(cpu), memoryMib: Math.round(memory) });
    }
    return usage;
  }

  async capacity(): Promise<ClusterCapacity> {
    const [{ items }, nodes] = await Promise.all([
      this.listServerObjects(),
      this.#core.listNode(this.#options.gameNodeSelector ? { labelSelector: this.#options.gameNodeSelector } : {}),
    ]);
    let running = 0;
    for (const server of items) {
      if (isSystem(server)) continue;
      const phase = server.status?.phase ?? 'Stopped';
      if (server.spec.desiredState === 'Running' || phase !== 'Stopped') running += 1;
    }
    const usable = nodes.items.filter(
      (node) => !node.spec?.unschedulable && node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    return { running, nodes: usable.length };
  }

  /** The RCON address and password of a server, from its Secret; ClusterNoPodError when no pod runs. */
  async rconEndpoint(name: string): Promise<RconEndpoint> {
    // From the caches once they answer (no GET per probe); straight from the API before that.
    const cached = this.caches.synced();
    const [server, pod] = cached
      ? [this.caches.get('servers', name), this.caches.get('pods', podName(name))]
      : await Promise.all([this.getServerObject(name), this.getPod(podName(name))]);
    if (!server) throw new ClusterNotFoundError(`server ${name} not found`);
    if (pod?.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp) throw new ClusterNoPodError(`${name} runs no pod`);
    const ref = server.spec.rconSecretRef ?? { name: rconSecretName(name), key: 'password' };
    let secret = cached ? this.caches.get('secrets', ref.name) : undefined;
    try {
      // A Secret the service did not make (not labelled as ours, so not cached) is read.
      secret ??= await this.#core.readNamespacedSecret({ name: ref.name, namespace: this.namespace });
    } catch (err) {
      translate(err, `secret ${ref.name}`);
    }
    const encoded = secret.data?.[ref.key];
    if (encoded === undefined) throw new ClusterNotFoundError(`secret ${ref.name} has no key ${ref.key}`);
    const address = this.#options.rconAddress?.(name, this.namespace) ?? { host: `${name}.${this.namespace}.svc`, port: RCON_PORT };
    return { ...address, password: Buffer.from(encoded, 'base64').toString('utf8') };
  }

  tasks(deps: ClusterTaskDeps): ClusterTask[] {
    return [lifecycleTask(this, this.#clock, deps)];
  }

  /**
   * A core/v1 Event on a server (`kubectl describe mcs`, `kubectl get events`): what the
   * controller did. Aggregated as client-go's event recorder does: the same event (server, type,
   * reason, message) again within ten minutes raises the first one's `count` and `lastTimestamp`
   * rather than adding another. Its times are metav1.Time (whole seconds); the MicroTime eventTime
   * is left out. The reporting instance is this replica's pod (POD_NAME), else its host name.
   */
  async recordServerEvent(server: MinecraftServer, type: 'Normal' | 'Warning', reason: string, message: string, component = LIFECYCLE_COMPONENT): Promise<void> {
    const now = new Date(Math.floor(this.#clock.now().getTime() / 1000) * 1000);
    const key = [server.metadata.name, server.metadata.uid, component, type, reason, message].join('\u0000');
    const seen = this.#events.get(key);
    if (seen && now.getTime() - seen.last < EVENT_AGGREGATION_MS) {
      seen.count += 1;
      seen.last = now.getTime();
      try {
        await this.#core.patchNamespacedEvent(
          { name: seen.name, namespace: this.namespace, body: { count: seen.count, lastTimestamp: now }, fieldManager: FIELD_MANAGER },
          mergePatch,
        );
        return;
      } catch (err) {
        // Gone (events expire after an hour by default): a new one is written.
        if (!isNotFound(err)) throw err;
      }
    }
    const instance = process.env.POD_NAME || hostname();
    const created = await this.#core.createNamespacedEvent({
      namespace: this.namespace,
      body: {
        metadata: { generateName: `${server.metadata.name}.`, namespace: this.namespace },
        involvedObject: {
          apiVersion: `${this.crd.group}/${this.crd.version}`,
          kind: MINECRAFT_SERVER_KIND,
          name: server.metadata.name,
          namespace: this.namespace,
          uid: server.metadata.uid,
        },
        type,
        reason,
        message,
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: `felis-${component}`, host: instance },
        reportingComponent: `felis.dev/${component}`,
        reportingInstance: instance,
      },
      fieldManager: FIELD_MANAGER,
    });
    if (this.#events.size >= EVENT_CACHE_SIZE) this.#events.delete(this.#events.keys().next().value!);
    this.#events.set(key, { name: created.metadata?.name ?? '', count: 1, last: now.getTime() });
  }

  // ---- workloads (the controller's) ----

  getStatefulSet(name: string): Promise<V1StatefulSet | undefined> {
    return orUndefined(this.#apps.readNamespacedStatefulSet({ name, namespace: this.namespace }));
  }

  async listStatefulSets(labelSelector: string): Promise<V1StatefulSet[]> {
    return (await this.#apps.listNamespacedStatefulSet({ namespace: this.namespace, labelSelector })).items;
  }

  /**
   * Server-side apply of a StatefulSet as the service's field manager, forced: the service owns
   * what it sends (a field another manager set, such as an operator's annotation, stays; a field
   * the service sent before and no longer sends goes), and takes back a field it owns that someone
   * else changed (`kubectl scale`). Creates the set when there is none.
   */
  async applyStatefulSet(body: V1StatefulSet): Promise<V1StatefulSet> {
    const name = body.metadata?.name ?? '';
    try {
      return await this.#apps.patchNamespacedStatefulSet(
        { name, namespace: this.namespace, body: { ...body, apiVersion: 'apps/v1', kind: 'StatefulSet' }, fieldManager: FIELD_MANAGER, force: true },
        serverSideApply,
      );
    } catch (err) {
      translate(err, `statefulset ${name}`);
    }
  }

  /**
   * Scales a server's existing StatefulSet (ClusterNotFoundError when it has none), keeping the pod
   * template it carries: an apply of the whole set, as the controller's own writes are.
   */
  async scaleStatefulSet(name: string, replicas: number): Promise<V1StatefulSet> {
    const [server, set] = await Promise.all([this.getServerObject(name), this.getStatefulSet(name)]);
    if (!set) throw new ClusterNotFoundError(`statefulset ${name} not found`);
    return this.applyStatefulSet(appliedStatefulSet(server, this.crd, replicas, set, false, this.eula));
  }

  async deleteStatefulSet(name: string): Promise<void> {
    await this.#apps.deleteNamespacedStatefulSet({ name, namespace: this.namespace }).catch(ignoreNotFound);
  }

  async listServices(labelSelector: string): Promise<V1Service[]> {
    return (await this.#core.listNamespacedService({ namespace: this.namespace, labelSelector })).items;
  }

  /** Server-side apply of a Service as the service's field manager, forced (as applyStatefulSet). */
  async applyService(body: V1Service): Promise<V1Service> {
    const name = body.metadata?.name ?? '';
    try {
      return await this.#core.patchNamespacedService(
        { name, namespace: this.namespace, body: { ...body, apiVersion: 'v1', kind: 'Service' }, fieldManager: FIELD_MANAGER, force: true },
        serverSideApply,
      );
    } catch (err) {
      translate(err, `service ${name}`);
    }
  }

  async deleteService(name: string): Promise<void> {
    await this.#core.deleteNamespacedService({ name, namespace: this.namespace }).catch(ignoreNotFound);
  }

  // ---- pods ----

  async listPods(labelSelector: string): Promise<V1Pod[]> {
    return (await this.#core.listNamespacedPod({ namespace: this.namespace, labelSelector })).items;
  }

  getPod(name: string): Promise<V1Pod | undefined> {
    return orUndefined(this.#core.readNamespacedPod({ name, namespace: this.namespace }));
  }

  async deletePod(name: string, options: { graceSeconds?: number } = {}): Promise<void> {
    const grace = options.graceSeconds === undefined ? {} : { gracePeriodSeconds: options.graceSeconds };
    await this.#core.deleteNamespacedPod({ name, namespace: this.namespace, ...grace }).catch(ignoreNotFound);
  }

  /** The console's lines of a server's pod, each with its runtime timestamp. */
  podLogs(server: string, options: PodLogOptions): AsyncIterable<PodLogLine> {
    return followPodLog(this.kubeConfig, this.namespace, podName(server), SERVER_CONTAINER, options, this.#options.podLogAnswerMs);
  }

  /** The lines of one container of any pod (a Job's step), stamped; ClusterNoPodError before it starts. */
  containerLog(pod: string, container: string, options: PodLogOptions): AsyncIterable<PodLogLine> {
    return followPodLog(this.kubeConfig, this.namespace, pod, container, options, this.#options.podLogAnswerMs);
  }

  // ---- world volumes (claims of the servers' StatefulSets) ----

  getPersistentVolumeClaim(name: string): Promise<V1PersistentVolumeClaim | undefined> {
    return orUndefined(this.#core.readNamespacedPersistentVolumeClaim({ name, namespace: this.namespace }));
  }

  /** The claim holding the server's world now (a moved world's, else the claim template's; world-volumes.ts). */
  async volumeOf(serverName: string): Promise<WorldVolumeRef> {
    try {
      return worldVolumeOf(await this.getServerObject(serverName));
    } catch (err) {
      if (err instanceof ClusterNotFoundError) return { claim: defaultWorldClaim(serverName) };
      throw err;
    }
  }

  /** Gives a world volume back (idle reclaim, once its archive verified). */
  async deletePersistentVolumeClaim(name: string): Promise<void> {
    await this.#core.deleteNamespacedPersistentVolumeClaim({ name, namespace: this.namespace }).catch(ignoreNotFound);
  }

  /** World jobs and file operations as Jobs on the servers' claims (world-jobs.ts, world-files.ts). */
  worldJobs(settings: WorldJobSettings): ClusterWorldJobs {
    const { log, clock, ...job } = settings;
    return {
      runner: new KubernetesWorldJobRunner({ client: this, namespace: this.namespace, log, ...job }),
      files: new KubernetesWorldFileOps({ client: this, namespace: this.namespace, image: job.image, log, clock }),
    };
  }

  // ---- jobs (backups, builds) ----

  async createJob(body: V1Job): Promise<V1Job> {
    try {
      return await this.#batch.createNamespacedJob({ namespace: this.namespace, body, fieldManager: FIELD_MANAGER });
    } catch (err) {
      translate(err, `job ${body.metadata?.name}`);
    }
  }

  async listJobs(labelSelector: string): Promise<V1Job[]> {
    return (await this.#batch.listNamespacedJob({ namespace: this.namespace, labelSelector })).items;
  }

  getJob(name: string): Promise<V1Job | undefined> {
    return orUndefined(this.#batch.readNamespacedJob({ name, namespace: this.namespace }));
  }

  /** Deletes a Job and, in the background, its pods. */
  async deleteJob(name: string): Promise<void> {
    await this.#batch.deleteNamespacedJob({ name, namespace: this.namespace, propagationPolicy: 'Background' }).catch(ignoreNotFound);
  }

  /**
   * Every Job matching `labelSelector` as it is now (ADDED), then each change. Lists again by
   * itself when its version expires, so a runner sees every Job's final state.
   */
  watchJobs(labelSelector: string, onEvent: (type: WatchEventType, job: V1Job) => void): ServerWatch {
    let current: ServerWatch | undefined;
    let stopped = false;
    const start = async (): Promise<void> => {
      const list = await this.#batch.listNamespacedJob({ namespace: this.namespace, labelSelector });
      if (stopped) return;
      for (const job of list.items) onEvent('ADDED', job);
      const watch = resumableWatch<V1Job>({
        kubeConfig: this.kubeConfig,
        path: `/apis/batch/v1/namespaces/${this.namespace}/jobs`,
        query: { labelSelector },
        fromVersion: list.metadata?.resourceVersion ?? '',
        onEvent,
        onExpired: () => void relist(),
        log: this.#log,
      });
      current = { stop: () => watch.stop() };
    };
    const relist = (delayMs = 0): void => {
      if (stopped) return;
      setTimeout(() => {
        start().catch((err: unknown) => {
          this.#log?.warn({ err }, 'job list failed; retrying');
          relist(1_000);
        });
      }, delayMs).unref();
    };
    relist();
    const handle: ServerWatch = {
      stop: () => {
        stopped = true;
        current?.stop();
        this.#watches.delete(handle);
      },
    };
    this.#watches.add(handle);
    return handle;
  }
}

export function podName(server: string): string {
  return `${server}-0`;
}

/** The object, or undefined when the API answers 404. */
async function orUndefined<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

/** Millicores of a metrics-API CPU figure: nanocores (`n`), microcores (`u`), millicores (`m`) or cores. */
export function usageCpuMilli(value: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)(n|u|m)?$/.exec(value);
  if (!match) return 0;
  const n = Number(match[1]);
  return match[2] === 'n' ? n / 1e6 : match[2] === 'u' ? n / 1e3 : match[2] === 'm' ? n : n * 1000;
}
