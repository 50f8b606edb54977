import type { Registry } from 'prom-client';
import type { Logger } from '../../lib/logger.js';
import type { RconEndpoint } from '../rcon/client.js';
import type { BuildJobs } from './build-jobs.js';
import type { ClusterNodes } from './nodes.js';
import type { ClusterWorldJobs, WorldJobSettings } from './world-jobs.js';

/**
 * The cluster adapter: where server resources and their pods live. Shaped for a Kubernetes
 * informer: a list that returns a resource version, then a watch from that version that feeds a
 * cache; writes go straight to the cluster and come back through the watch.
 */

export const PHASES = ['Unknown', 'Stopped', 'Starting', 'Running', 'Stopping', 'Failed'] as const;
export type Phase = (typeof PHASES)[number];
export const AUTOSTART_POLICIES = ['ownerOnly', 'public', 'allowlist'] as const;
export type AutostartPolicy = (typeof AUTOSTART_POLICIES)[number];
export const DESIRED_STATES = ['Running', 'Stopped'] as const;
export type DesiredState = (typeof DESIRED_STATES)[number];

/** The label domain of our server resources (`<vendor>/…`). */
export const LABEL_DOMAIN = 'felis.dev';
/** `felis.dev/forwarding=legacy`: the proxy forwards players BungeeCord-style. */
export const FORWARDING_LABEL = `${LABEL_DOMAIN}/forwarding`;
/** `felis.dev/system=true`: a platform-provisioned system service (login gate, lobby). */
export const SYSTEM_LABEL = `${LABEL_DOMAIN}/system`;

/** What an operator asked for: the server resource's spec. */
export interface ServerSpec {
  name: string;
  subdomain: string;
  displayName?: string;
  image?: string;
  /** Pod memory limit, an orchestrator quantity such as `4Gi`. */
  memory?: string;
  memoryRequest?: string;
  storage?: string;
  cpu?: string;
  cpuRequest?: string;
  autostartPolicy?: AutostartPolicy;
  desiredState?: DesiredState;
  /** Seconds a server may sit empty before idle auto-stop; 0 never idles out. */
  idleStopSeconds?: number;
  labels: Record<string, string>;
  /** The node the server's world volume and pod are pinned to (nodes.ts); anywhere when unset. */
  node?: string;
  /** The world volume a move made for the server (world-volumes.ts); unset: the StatefulSet's own claim. */
  worldVolume?: string;
}

/**
 * The limits of a server created without them, written into its spec so that every server counts
 * against a quota; a pod whose spec was made elsewhere without memory or storage gets these too.
 */
export const DEFAULT_SERVER_RESOURCES = { memory: '4Gi', storage: '10Gi', cpu: '2' } as const;

/** The fields of a spec an operator may change after creation (PATCH /servers/{name}). */
export type ServerSpecPatch = Partial<
  Pick<ServerSpec, 'displayName' | 'autostartPolicy' | 'image' | 'memory' | 'memoryRequest' | 'cpu' | 'cpuRequest' | 'idleStopSeconds'>
>;

/** What the cluster reports: the server resource's status. */
export interface ServerStatus {
  phase: Phase;
  ready: boolean;
  playersOnline: number;
  playersMax: number;
  /** True while the player count cannot be read over RCON. */
  playerCountUnknown: boolean;
  /** Pod recreations after a start time-out in this start (at most 3). */
  autoRestarts: number;
  /** Failed and no automatic retry will bring it up. */
  startGaveUp: boolean;
  /** Effective idle stop in seconds (0 when it never idles out). */
  idleStopSeconds: number;
  endpointMode?: string;
  endpointAddress?: string;
  /** The node its pod runs on, while it has one. */
  node?: string;
}

export interface ServerResource {
  spec: ServerSpec;
  status: ServerStatus;
  /** Opaque, changes on every write (Kubernetes `metadata.resourceVersion`). */
  resourceVersion: string;
}

export type ServerWatchEvent =
  | { type: 'ADDED' | 'MODIFIED'; server: ServerResource }
  | { type: 'DELETED'; name: string; resourceVersion: string };

export interface ServerList {
  servers: ServerResource[];
  /** Start a watch here to miss nothing that happened after the list. */
  resourceVersion: string;
}

export interface ServerWatch {
  stop(): void;
}

export interface ClusterCapacity {
  /** Servers that hold a node slot: desired Running, or not yet Stopped. System servers excluded. */
  running: number;
  /** Nodes that can host game servers. */
  nodes: number;
}

/** A write refused because the resource already exists (or a subdomain is taken). */
export class ClusterConflictError extends Error {
  override name = 'ClusterConflictError';
}

/** A write aimed at a resource that does not exist. */
export class ClusterNotFoundError extends Error {
  override name = 'ClusterNotFoundError';
}

/** The server has no running pod (stopped, or not scheduled yet): no log to read, no RCON to reach. */
export class ClusterNoPodError extends Error {
  override name = 'ClusterNoPodError';
}

/** One line of a server pod's log, with the time the container runtime stamped on it. */
export interface PodLogLine {
  time: Date;
  line: string;
}

export interface PodLogOptions {
  /** Lines stamped at or after this time (Kubernetes `sinceTime`, whole seconds); otherwise from the start, or the last `tailLines`. */
  sinceTime?: Date;
  /** Only the last lines (Kubernetes `tailLines`); ignored with `sinceTime`. */
  tailLines?: number;
  /** Keep yielding new lines until the pod ends or `signal` aborts. */
  follow: boolean;
  signal: AbortSignal;
}

/**
 * A leadership as the cluster's tasks use it: the Kubernetes controller's coordination.k8s.io Lease
 * (kubernetes/lease.ts); src/coordination's database Leadership has the same shape.
 */
export interface LeaderLock {
  /** Takes or renews the leadership; resolves whether this replica leads. */
  acquire(): Promise<boolean>;
  /** Whether this replica leads, from its last renewal. */
  holds(): boolean;
  release(): Promise<void>;
  /** How long until the next try is worth making (sooner than the caller's period when the holder is about to lapse). */
  nextTryInMs?(): number;
}

/** What the composition root gives the cluster's own background work. */
export interface ClusterTaskDeps {
  /** Where the tasks' metrics go. */
  registry: Registry;
  log: Logger;
  /** Calls `listener` when a server's desired state changes; returns the function that stops the calls. */
  onDesiredStateChange(listener: (name: string) => void): () => void;
  /**
   * Removes what the service's database holds of a server deleted in the cluster itself
   * (`kubectl delete`; the servers feature's `forgetDeletedServer`). The Kubernetes controller's
   * finalizer calls it after the clean stop and lets the resource go only once it resolved.
   */
  forgetServer?(name: string): Promise<void>;
}

/** Work beside the requests, started and stopped by the composition root (a coordination BackgroundTask). */
export interface ClusterTask {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
}

export interface ClusterAdapter {
  readonly kind: 'simulated' | 'kubernetes' | 'local';
  /** Image builds as Jobs; absent where the cluster runs none (the simulated one: builds run in-process). */
  readonly builds?: BuildJobs;
  /** Resolves when the cluster answers; rejects with the reason otherwise. */
  ping(): Promise<void>;
  /**
   * Whether the reads of the cluster this replica serves come from watch-fed caches that have
   * synced (Kubernetes' informers): readiness holds through an API-server blip while they have.
   * Absent where there are no such caches.
   */
  cachesSynced?(): boolean;
  close(): Promise<void>;

  listServers(): Promise<ServerList>;
  /**
   * Streams changes after `resourceVersion`. `onError` means the watch ended and the caller
   * must list again (Kubernetes answers 410 Gone for an expired version).
   */
  watchServers(
    resourceVersion: string,
    onEvent: (event: ServerWatchEvent) => void,
    onError: (err: Error) => void,
  ): ServerWatch;
  /** Creates a server resource; ClusterConflictError when the name exists. */
  createServer(spec: ServerSpec): Promise<ServerResource>;
  setDesiredState(name: string, state: DesiredState): Promise<ServerResource>;
  /** Changes fields of a spec; ClusterNotFoundError when the server does not exist. */
  updateServer(name: string, patch: ServerSpecPatch): Promise<ServerResource>;
  /** Deletes a server resource (a retirement with `delete`); ClusterNotFoundError when it is gone. */
  removeServer(name: string): Promise<void>;
  /**
   * The emergency stop: the stop is recorded (desired Stopped) first, then the pod ends at once,
   * with no clean save over RCON and no shutdown grace. ClusterNotFoundError when the server does not exist.
   */
  emergencyStop(name: string): Promise<ServerResource>;
  /** Deletes the pod of the current start so it comes up again with a fresh restart budget. */
  recreatePod(name: string): Promise<ServerResource>;
  /** The backend answered the proxy: the server is ready for players. */
  reportReady(name: string): Promise<void>;
  capacity(): Promise<ClusterCapacity>;
  /**
   * The log of the server's running pod. Iterating it throws ClusterNoPodError when there is no
   * pod; a followed log ends when the pod ends or `signal` aborts.
   */
  podLogs(name: string, options: PodLogOptions): AsyncIterable<PodLogLine>;
  /** Where the server's RCON listens, with the password from the server's secret. ClusterNoPodError when it runs no pod. */
  rconEndpoint(name: string): Promise<RconEndpoint>;
  /**
   * The cluster's own background work that realises the servers' desired state: the lifecycle
   * controller on Kubernetes; none on the simulated cluster, whose model moves by its own ticks.
   */
  tasks(deps: ClusterTaskDeps): ClusterTask[];
  /**
   * World jobs and file operations as the cluster's own Jobs on the servers' claims. Absent where
   * the world volumes are folders of this process (the simulated cluster).
   */
  worldJobs?(settings: WorldJobSettings): ClusterWorldJobs;
  /**
   * What each server's pod uses now (the metrics API on Kubernetes; a model on the simulated
   * cluster), by server name. Undefined where the cluster has no metrics API.
   */
  podUsage?(): Promise<Map<string, PodUsage> | undefined>;
  /** The cluster's nodes and the servers' placement on them (nodes.ts). */
  readonly nodes?: ClusterNodes;
}

/** A server pod's CPU (millicores) and memory (MiB), as the metrics API last sampled them. */
export interface PodUsage {
  cpuMilli: number;
  memoryMib: number;
}

