import { systemClock, type Clock } from '../../lib/clock.js';
import type { RconEndpoint } from '../rcon/client.js';
import { SimulatedNodes } from './simulated-nodes.js';
import { SimulatedPods } from './simulated-pods.js';
import { readSpecs, writeSpecs } from './spec-file.js';
import { defaultWorldClaim, type NodeLocalVolumes } from './world-volumes.js';
import {
  ClusterConflictError,
  ClusterNotFoundError,
  SYSTEM_LABEL,
  type ClusterAdapter,
  type ClusterCapacity,
  type ClusterTask,
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
} from './types.js';

export interface SimulatedClusterOptions {
  clock?: Clock;
  /** Time from Starting to Running. */
  startDelayMs?: number;
  /** A start that is not Running after this long times out (its pod is recreated, at most 3 times). */
  startTimeoutMs?: number;
  stopDelayMs?: number;
  maxAutoRestarts?: number;
  defaultIdleStopSeconds?: number;
  defaultPlayersMax?: number;
  /** Approved game nodes (`sim-node-1…`). */
  nodes?: number;
  /** Nodes not yet approved as game nodes, after the approved ones. */
  pendingNodes?: number;
  /**
   * Each world folder stands for a volume on one node (as local disks), and a server move copies
   * the world into a new volume on the target node; false (default): every node reaches every
   * world, and a move changes only the placement.
   */
  nodeLocalVolumes?: boolean;
  /**
   * A file that keeps the servers' specs across restarts (the embedded default's stand-in for
   * the cluster's own store): read at construction, written at every change of a spec. Phases
   * are not kept: a server whose desired state is Running starts again.
   */
  stateFile?: string;
}

interface SimServer {
  spec: ServerSpec;
  status: ServerResource['status'];
  resourceVersion: string;
  /** When the current phase began (clock milliseconds). */
  phaseSince: number;
  /** Starts of this server never come up (simulates a start time-out). */
  hangs: boolean;
}

const clone = <T>(value: T): T => structuredClone(value);

/**
 * An in-process cluster for `npm start` without Kubernetes and for tests. Phases move on the
 * injected clock: `tick()` applies every transition that is due (tests advance a ManualClock and
 * tick; `startTicking()` does it on a timer for a real run). Every change is delivered to watchers
 * synchronously, as an informer would deliver it (later).
 */
export class SimulatedCluster implements ClusterAdapter {
  readonly kind = 'simulated' as const;
  readonly clock: Clock;
  readonly options: Required<Omit<SimulatedClusterOptions, 'clock' | 'stateFile' | 'nodeLocalVolumes'>>;
  readonly #stateFile: string | undefined;
  #down = false;
  #version = 0;
  #servers = new Map<string, SimServer>();
  #watchers = new Set<(event: ServerWatchEvent) => void>();
  #timer: NodeJS.Timeout | undefined;
  /** Pod logs and RCON of the servers (simulated-pods.ts). */
  readonly pods: SimulatedPods;
  /** The nodes, and where each server's world lives (simulated-nodes.ts). */
  readonly nodes: SimulatedNodes;

  constructor(options: SimulatedClusterOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.options = {
      startDelayMs: options.startDelayMs ?? 5_000,
      startTimeoutMs: options.startTimeoutMs ?? 120_000,
      stopDelayMs: options.stopDelayMs ?? 2_000,
      maxAutoRestarts: options.maxAutoRestarts ?? 3,
      defaultIdleStopSeconds: options.defaultIdleStopSeconds ?? 900,
      defaultPlayersMax: options.defaultPlayersMax ?? 20,
      nodes: options.nodes ?? 1,
      pendingNodes: options.pendingNodes ?? 0,
    };
    this.pods = new SimulatedPods(this.clock);
    this.nodes = new SimulatedNodes(this.options.nodes, this.options.pendingNodes, () => this.#check(), (server, node) => {
      const sim = this.#get(server);
      if (node === undefined) delete sim.spec.node;
      else sim.spec.node = node;
      this.#save();
      return this.#emit('MODIFIED', sim);
    }, (node) => [...this.#servers.values()].filter((s) => s.status.node === node).map((s) => s.spec.name),
    options.nodeLocalVolumes ? this.#nodeLocalVolumes() : undefined);
    // The kept specs are added before the file is named: each add writes the whole file, so
    // loading 10,000 servers that way wrote it 10,000 times (minutes of start-up), to say what
    // it already said.
    for (const spec of this.#load(options.stateFile)) this.addServer(spec);
    this.#stateFile = options.stateFile;
  }

  /**
   * The simulated node-local volumes: a server's volume is its spec's `worldVolume` (else the
   * claim template's name) on its node; a move's claim is recorded with its node, and the switch
   * writes both into the spec. The bytes are the world folders' (simulated-worlds.ts).
   */
  #nodeLocalVolumes(): NodeLocalVolumes {
    const claims = new Map<string, string>();
    return {
      current: async (server) => {
        this.#check();
        const { spec } = this.#get(server);
        return { claim: spec.worldVolume ?? defaultWorldClaim(server), ...(spec.node ? { node: spec.node } : {}) };
      },
      create: async (server, claim, node) => {
        this.#check();
        this.#get(server);
        if (!this.nodes.node(node)) throw new ClusterNotFoundError(`node ${node} not found`);
        const bound = claims.get(claim);
        if (bound !== undefined && bound !== node) throw new Error(`claim ${claim} is bound to ${bound}, not ${node}`);
        claims.set(claim, node);
      },
      switchTo: async (server, volume) => {
        this.#check();
        const sim = this.#get(server);
        sim.spec.node = volume.node;
        sim.spec.worldVolume = volume.claim;
        this.#save();
        return this.#emit('MODIFIED', sim);
      },
    };
  }

  /** The specs the state file kept, if any. */
  #load(stateFile: string | undefined): ServerSpec[] {
    return stateFile ? readSpecs(stateFile) : [];
  }

  /** Writes every spec to the state file. */
  #save(): void {
    if (this.#stateFile) writeSpecs(this.#stateFile, [...this.#servers.values()].map((s) => s.spec));
  }

  /** Makes the cluster unreachable (tests of the 503 paths). */
  setReachable(reachable: boolean): void {
    this.#down = !reachable;
  }

  async ping(): Promise<void> {
    this.#check();
  }

  async close(): Promise<void> {
    this.stopTicking();
    this.#watchers.clear();
    this.pods.close();
  }

  /** Applies due transitions every `intervalMs` of real time (a real run, not tests). */
  startTicking(intervalMs = 250): void {
    this.#timer ??= setInterval(() => this.tick(), intervalMs);
    this.#timer.unref();
  }

  stopTicking(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async listServers(): Promise<ServerList> {
    this.#check();
    return {
      servers: [...this.#servers.values()].map((s) => this.#resource(s)),
      resourceVersion: String(this.#version),
    };
  }

  watchServers(
    _resourceVersion: string,
    onEvent: (event: ServerWatchEvent) => void,
    _onError?: (err: Error) => void,
  ): ServerWatch {
    // Writes are delivered synchronously, so nothing can happen between a list and this call, and
    // the watch never breaks (so it never reports an error).
    this.#watchers.add(onEvent);
    return { stop: () => this.#watchers.delete(onEvent) };
  }

  async createServer(spec: ServerSpec): Promise<ServerResource> {
    this.#check();
    return this.addServer(spec);
  }

  /** Synchronous create, for seeding (system servers, benches, tests). */
  addServer(spec: ServerSpec): ServerResource {
    if (this.#servers.has(spec.name)) throw new ClusterConflictError(`server ${spec.name} exists`);
    const system = spec.labels[SYSTEM_LABEL] === 'true';
    const server: SimServer = {
      spec: clone({ ...spec, desiredState: spec.desiredState ?? 'Stopped' }),
      status: {
        phase: 'Stopped',
        ready: false,
        playersOnline: 0,
        playersMax: this.options.defaultPlayersMax,
        playerCountUnknown: false,
        autoRestarts: 0,
        startGaveUp: false,
        idleStopSeconds: system ? 0 : (spec.idleStopSeconds ?? this.options.defaultIdleStopSeconds),
      },
      resourceVersion: '',
      phaseSince: this.#now(),
      hangs: false,
    };
    this.#servers.set(spec.name, server);
    this.#save();
    if (server.spec.desiredState === 'Running') this.#enter(server, 'Starting');
    return this.#emit('ADDED', server);
  }

  async setDesiredState(name: string, state: DesiredState): Promise<ServerResource> {
    this.#check();
    const server = this.#get(name);
    server.spec.desiredState = state;
    this.#save();
    if (state === 'Running' && (server.status.phase === 'Stopped' || server.status.phase === 'Stopping')) {
      server.status.autoRestarts = 0;
      this.#enter(server, 'Starting');
    } else if (state === 'Stopped' && server.status.phase !== 'Stopped' && server.status.phase !== 'Stopping') {
      this.#enter(server, 'Stopping');
    }
    return this.#emit('MODIFIED', server);
  }

  async updateServer(name: string, patch: ServerSpecPatch): Promise<ServerResource> {
    this.#check();
    const server = this.#get(name);
    server.spec = { ...server.spec, ...clone(patch) };
    this.#save();
    if (patch.idleStopSeconds !== undefined && server.spec.labels[SYSTEM_LABEL] !== 'true') {
      server.status.idleStopSeconds = patch.idleStopSeconds;
    }
    return this.#emit('MODIFIED', server);
  }

  async removeServer(name: string): Promise<void> {
    this.#check();
    this.deleteServer(name);
  }

  async emergencyStop(name: string): Promise<ServerResource> {
    this.#check();
    const server = this.#get(name);
    server.spec.desiredState = 'Stopped';
    // The pod ends at once: no Stopping phase to wait through.
    if (server.status.phase !== 'Stopped') {
      this.#enter(server, 'Stopped');
      server.status.autoRestarts = 0;
      server.status.startGaveUp = false;
    }
    return this.#emit('MODIFIED', server);
  }

  async recreatePod(name: string): Promise<ServerResource> {
    this.#check();
    const server = this.#get(name);
    server.status.autoRestarts = 0;
    server.status.startGaveUp = false;
    this.#enter(server, server.spec.desiredState === 'Running' ? 'Starting' : 'Stopped');
    return this.#emit('MODIFIED', server);
  }

  async reportReady(name: string): Promise<void> {
    this.#check();
    const server = this.#get(name);
    if (server.status.phase === 'Running' && !server.status.ready) {
      server.status.ready = true;
      this.#emit('MODIFIED', server);
    }
  }

  async capacity(): Promise<ClusterCapacity> {
    this.#check();
    let running = 0;
    for (const s of this.#servers.values()) {
      if (s.spec.labels[SYSTEM_LABEL] === 'true') continue;
      if (s.spec.desiredState === 'Running' || s.status.phase !== 'Stopped') running += 1;
    }
    return { running, nodes: this.nodes.usable().length };
  }

  podLogs(name: string, options: PodLogOptions): AsyncIterable<PodLogLine> {
    this.#check();
    return this.pods.logs(name, options);
  }

  async rconEndpoint(name: string): Promise<RconEndpoint> {
    this.#check();
    return this.pods.rconEndpoint(name, this.#get(name).status.phase === 'Running');
  }

  /**
   * Plausible figures for the usage history of `npm start`: a pod that runs uses a base that
   * depends on its name, more with each player online, and a slow swing over the hour; a pod that
   * starts uses little, a stopped server runs no pod. The same clock gives the same figures.
   */
  async podUsage(): Promise<Map<string, PodUsage>> {
    this.#check();
    const now = this.#now();
    const usage = new Map<string, PodUsage>();
    for (const [name, server] of this.#servers) {
      const { phase, playersOnline } = server.status;
      if (phase !== 'Running' && phase !== 'Starting' && phase !== 'Stopping') continue;
      let seed = 0;
      for (const ch of name) seed = (seed * 31 + ch.charCodeAt(0)) % 997;
      const swing = Math.sin((now / 3600_000) * 2 * Math.PI + seed) * 0.15 + 1;
      const running = phase === 'Running';
      usage.set(name, {
        cpuMilli: Math.round((running ? 120 + (seed % 80) + 90 * playersOnline : 600) * swing),
        memoryMib: Math.round((running ? 1400 + (seed % 400) + 45 * playersOnline : 900) * swing),
      });
    }
    return usage;
  }

  /** None: the model realises desired state by itself, at each tick. */
  tasks(): ClusterTask[] {
    return [];
  }

  /** Applies every transition that is due at the clock's now. */
  tick(): void {
    const now = this.#now();
    for (const server of this.#servers.values()) {
      const age = now - server.phaseSince;
      const { phase } = server.status;
      if (phase === 'Starting') {
        // A pod pinned to a cordoned or missing node stays pending, as the scheduler would keep it.
        if (!this.#placeable(server)) continue;
        if (!server.hangs && age >= this.options.startDelayMs) {
          this.#enter(server, 'Running');
          server.status.ready = true;
          this.#emit('MODIFIED', server);
        } else if (server.hangs && age >= this.options.startTimeoutMs) {
          if (server.status.autoRestarts < this.options.maxAutoRestarts) {
            server.status.autoRestarts += 1;
            this.#enter(server, 'Starting');
          } else {
            this.#enter(server, 'Failed');
            server.status.startGaveUp = true;
          }
          this.#emit('MODIFIED', server);
        }
      } else if (phase === 'Stopping' && age >= this.options.stopDelayMs) {
        this.#enter(server, 'Stopped');
        server.status.autoRestarts = 0;
        server.status.startGaveUp = false;
        this.#emit('MODIFIED', server);
      }
    }
  }

  /** Starts of this server hang until they time out (or come up again once cleared). */
  setStartHangs(name: string, hangs: boolean): void {
    this.#get(name).hangs = hangs;
  }

  /** Puts a server in Failed, as a crash loop (`gaveUp` false) or an invalid spec (`gaveUp` true). */
  fail(name: string, gaveUp: boolean): void {
    const server = this.#get(name);
    this.#enter(server, 'Failed');
    server.status.startGaveUp = gaveUp;
    this.#emit('MODIFIED', server);
  }

  setPlayers(name: string, online: number, max?: number): void {
    const server = this.#get(name);
    server.status.playersOnline = online;
    if (max !== undefined) server.status.playersMax = max;
    server.status.playerCountUnknown = false;
    this.#emit('MODIFIED', server);
  }

  setPlayerCountUnknown(name: string, unknown: boolean): void {
    const server = this.#get(name);
    server.status.playerCountUnknown = unknown;
    this.#emit('MODIFIED', server);
  }

  setLabel(name: string, key: string, value: string | undefined): void {
    const server = this.#get(name);
    if (value === undefined) delete server.spec.labels[key];
    else server.spec.labels[key] = value;
    this.#save();
    this.#emit('MODIFIED', server);
  }

  deleteServer(name: string): void {
    if (!this.#servers.delete(name)) throw new ClusterNotFoundError(`server ${name} not found`);
    this.#save();
    this.pods.phaseChanged(name, 'Unknown', 0);
    const resourceVersion = String(++this.#version);
    for (const watcher of this.#watchers) watcher({ type: 'DELETED', name, resourceVersion });
  }

  /** The current resource, or undefined. */
  server(name: string): ServerResource | undefined {
    const server = this.#servers.get(name);
    return server && this.#resource(server);
  }

  /** A first start binds the world to the emptiest usable node (a node-local volume); later starts follow it. */
  #place(server: SimServer): void {
    if (server.spec.node === undefined) {
      const load = (node: string) => [...this.#servers.values()].filter((s) => s.spec.node === node).length;
      const [emptiest] = this.nodes.usable().sort((a, b) => load(a.name) - load(b.name) || a.name.localeCompare(b.name));
      if (emptiest) server.spec.node = emptiest.name;
    }
    if (server.spec.node !== undefined) server.status.node = server.spec.node;
  }

  #placeable(server: SimServer): boolean {
    if (server.spec.node === undefined) return true;
    const node = this.nodes.node(server.spec.node);
    return node !== undefined && node.ready && !node.unschedulable;
  }

  #enter(server: SimServer, phase: ServerResource['status']['phase']): void {
    server.status.phase = phase;
    if (phase === 'Starting' && server.spec.labels[SYSTEM_LABEL] !== 'true') this.#place(server);
    if (phase === 'Stopped') delete server.status.node;
    server.phaseSince = this.#now();
    if (phase !== 'Running') {
      server.status.ready = false;
      server.status.playersOnline = 0;
    }
    if (phase === 'Running') {
      server.status.endpointMode = 'service';
      server.status.endpointAddress = `${server.spec.name}.felis.svc:25565`;
    }
    this.pods.phaseChanged(server.spec.name, phase, server.status.playersMax);
  }

  #emit(type: 'ADDED' | 'MODIFIED', server: SimServer): ServerResource {
    server.resourceVersion = String(++this.#version);
    const resource = this.#resource(server);
    for (const watcher of this.#watchers) watcher({ type, server: this.#resource(server) });
    return resource;
  }

  #resource(server: SimServer): ServerResource {
    return { spec: clone(server.spec), status: { ...server.status }, resourceVersion: server.resourceVersion };
  }

  #get(name: string): SimServer {
    const server = this.#servers.get(name);
    if (!server) throw new ClusterNotFoundError(`server ${name} not found`);
    return server;
  }

  #check(): void {
    if (this.#down) throw new Error('simulated cluster is unreachable');
  }

  #now(): number {
    return this.clock.now().getTime();
  }
}
