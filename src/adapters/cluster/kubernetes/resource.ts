import {
  AUTOSTART_POLICIES,
  DESIRED_STATES,
  LABEL_DOMAIN,
  PHASES,
  type AutostartPolicy,
  type DesiredState,
  type Phase,
  type ServerResource,
  type ServerSpec,
  type ServerSpecPatch,
} from '../types.js';

/** Where the MinecraftServer custom resource lives (the group is configurable; this is the default). */
export interface CrdCoordinates {
  group: string;
  version: string;
  plural: string;
}

export const DEFAULT_CRD: CrdCoordinates = { group: LABEL_DOMAIN, version: 'v1alpha1', plural: 'minecraftservers' };
export const MINECRAFT_SERVER_KIND = 'MinecraftServer';

/** Every object the platform makes for a server carries this label (the server's name). */
export const SERVER_LABEL = `${LABEL_DOMAIN}/server`;
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'felis' } as const;

/**
 * The lifecycle controller's finalizer: a server deleted in the cluster (`kubectl delete`) stays,
 * marked for deletion, until the controller has stopped its game cleanly and the service's database
 * has let go of it (controller.ts `#finalize`).
 */
export const SERVER_FINALIZER = `${LABEL_DOMAIN}/clean-stop`;

export const DEFAULT_START_TIMEOUT_SECONDS = 300;
export const DEFAULT_READINESS_TIMEOUT_SECONDS = 5;
export const DEFAULT_IDLE_STOP_SECONDS = 900;
export const DEFAULT_PLAYERS_MAX = 20;

export interface MinecraftServerSpec {
  subdomain: string;
  displayName?: string;
  /** Pinned by digest (`…@sha256:…`) when it is a platform image. */
  image?: string;
  memory?: string;
  /** JVM heap; defaults to three quarters of `memory`. */
  heap?: string;
  storage?: string;
  resources?: { cpu?: string; cpuRequest?: string; memoryRequest?: string };
  desiredState?: DesiredState;
  autostartPolicy?: AutostartPolicy;
  /** The Secret holding the RCON password (never returned by the API). */
  rconSecretRef?: { name: string; key: string };
  startTimeoutSeconds?: number;
  readinessTimeoutSeconds?: number;
  idle?: { stopSeconds?: number };
  /** A retired server keeps its world volume but runs nothing and is never woken again. */
  retired?: boolean;
  /** The node the pod (and so a node-local world volume) is pinned to (nodes.ts). */
  nodeName?: string;
  /** The claim that holds the world after a move to another node (world-volumes.ts); unset: the claim template's. */
  worldClaim?: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime: string;
  /** The server's metadata.generation this condition was set from. */
  observedGeneration?: number;
}

export interface MinecraftServerStatus {
  phase?: Phase;
  ready?: boolean;
  endpoint?: { mode: string; address: string };
  players?: { online: number; max: number; unknown?: boolean };
  autoRestarts?: number;
  startGaveUp?: boolean;
  /** The current start attempt began (ISO time). */
  startedAt?: string;
  /** The pod of this start was first ready (ISO time): idle stop waits 3 minutes after it. */
  firstReadyAt?: string;
  /** When the server last became empty. */
  emptySince?: string;
  /** A timed-out start's pod is recreated at this time (the doubling back-off). */
  retryAt?: string;
  idleStopSeconds?: number;
  conditions?: Condition[];
  /** The node the server's pod runs on, while it has one. */
  node?: string;
  /** The metadata.generation of the spec the controller last acted on. */
  observedGeneration?: number;
}

export interface MinecraftServer {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    resourceVersion?: string;
    uid?: string;
    /** Bumped by the API server on every spec change; status.observedGeneration says which one the controller acted on. */
    generation?: number;
    /** What must happen before the API server lets the object go (SERVER_FINALIZER is the controller's). */
    finalizers?: string[];
    /** Set when someone deleted it; the object stays until its finalizers are gone. */
    deletionTimestamp?: string;
    [key: string]: unknown;
  };
  spec: MinecraftServerSpec;
  status?: MinecraftServerStatus;
}

const oneOf = <T extends string>(values: readonly T[], value: unknown): T | undefined =>
  values.includes(value as T) ? (value as T) : undefined;

export function isSystem(object: MinecraftServer): boolean {
  return object.metadata.labels?.[`${LABEL_DOMAIN}/system`] === 'true';
}

export function effectiveIdleStopSeconds(object: MinecraftServer): number {
  if (isSystem(object)) return 0;
  return object.spec.idle?.stopSeconds ?? DEFAULT_IDLE_STOP_SECONDS;
}

/** The custom resource as the rest of the control plane sees a server. */
export function toServerResource(object: MinecraftServer): ServerResource {
  const { spec, metadata } = object;
  const status = object.status ?? {};
  const serverSpec: ServerSpec = {
    name: metadata.name,
    subdomain: spec.subdomain,
    desiredState: oneOf(DESIRED_STATES, spec.desiredState) ?? 'Stopped',
    labels: { ...metadata.labels },
  };
  if (spec.displayName !== undefined) serverSpec.displayName = spec.displayName;
  if (spec.image !== undefined) serverSpec.image = spec.image;
  if (spec.memory !== undefined) serverSpec.memory = spec.memory;
  if (spec.storage !== undefined) serverSpec.storage = spec.storage;
  if (spec.resources?.cpu !== undefined) serverSpec.cpu = spec.resources.cpu;
  if (spec.resources?.cpuRequest !== undefined) serverSpec.cpuRequest = spec.resources.cpuRequest;
  if (spec.resources?.memoryRequest !== undefined) serverSpec.memoryRequest = spec.resources.memoryRequest;
  const policy = oneOf(AUTOSTART_POLICIES, spec.autostartPolicy);
  if (policy) serverSpec.autostartPolicy = policy;
  if (spec.idle?.stopSeconds !== undefined) serverSpec.idleStopSeconds = spec.idle.stopSeconds;
  if (spec.nodeName) serverSpec.node = spec.nodeName;
  if (spec.worldClaim) serverSpec.worldVolume = spec.worldClaim;
  const phase = oneOf(PHASES, status.phase) ?? (spec.desiredState === 'Running' ? 'Unknown' : 'Stopped');
  const resource: ServerResource = {
    spec: serverSpec,
    status: {
      phase,
      ready: status.ready === true,
      playersOnline: status.players?.online ?? 0,
      playersMax: status.players?.max ?? DEFAULT_PLAYERS_MAX,
      playerCountUnknown: status.players?.unknown === true,
      autoRestarts: status.autoRestarts ?? 0,
      startGaveUp: status.startGaveUp === true,
      idleStopSeconds: status.idleStopSeconds ?? effectiveIdleStopSeconds(object),
    },
    resourceVersion: metadata.resourceVersion ?? '',
  };
  if (status.node) resource.status.node = status.node;
  if (status.endpoint) {
    resource.status.endpointMode = status.endpoint.mode;
    resource.status.endpointAddress = status.endpoint.address;
  }
  return resource;
}

export function rconSecretName(name: string): string {
  return `${name}-rcon`;
}

/** The custom resource a create over the API writes. */
export function toMinecraftServer(spec: ServerSpec, crd: CrdCoordinates, namespace: string): MinecraftServer {
  const resources: MinecraftServerSpec['resources'] = {};
  if (spec.cpu !== undefined) resources.cpu = spec.cpu;
  if (spec.cpuRequest !== undefined) resources.cpuRequest = spec.cpuRequest;
  if (spec.memoryRequest !== undefined) resources.memoryRequest = spec.memoryRequest;
  const body: MinecraftServerSpec = {
    subdomain: spec.subdomain,
    desiredState: spec.desiredState ?? 'Stopped',
    resources,
    rconSecretRef: { name: rconSecretName(spec.name), key: 'password' },
  };
  if (spec.displayName !== undefined) body.displayName = spec.displayName;
  if (spec.image !== undefined) body.image = spec.image;
  if (spec.memory !== undefined) body.memory = spec.memory;
  if (spec.storage !== undefined) body.storage = spec.storage;
  if (spec.autostartPolicy !== undefined) body.autostartPolicy = spec.autostartPolicy;
  if (spec.idleStopSeconds !== undefined) body.idle = { stopSeconds: spec.idleStopSeconds };
  return {
    apiVersion: `${crd.group}/${crd.version}`,
    kind: MINECRAFT_SERVER_KIND,
    metadata: { name: spec.name, namespace, labels: { ...spec.labels } },
    spec: body,
  };
}

/** A spec change as a JSON merge patch: only the fields named change (`resources` merges key by key). */
export function toSpecPatch(patch: ServerSpecPatch): Partial<MinecraftServerSpec> {
  const body: Partial<MinecraftServerSpec> = {};
  const resources: MinecraftServerSpec['resources'] = {};
  if (patch.cpu !== undefined) resources.cpu = patch.cpu;
  if (patch.cpuRequest !== undefined) resources.cpuRequest = patch.cpuRequest;
  if (patch.memoryRequest !== undefined) resources.memoryRequest = patch.memoryRequest;
  if (Object.keys(resources).length > 0) body.resources = resources;
  if (patch.displayName !== undefined) body.displayName = patch.displayName;
  if (patch.image !== undefined) body.image = patch.image;
  if (patch.memory !== undefined) body.memory = patch.memory;
  if (patch.autostartPolicy !== undefined) body.autostartPolicy = patch.autostartPolicy;
  if (patch.idleStopSeconds !== undefined) body.idle = { stopSeconds: patch.idleStopSeconds };
  return body;
}
