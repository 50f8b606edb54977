import { ClusterForbiddenError, GAME_NODE_LABEL, type ClusterNodes, type NodeList, type NodeResource, type NodeWatchEvent } from './nodes.js';
import { ClusterNotFoundError, type ServerResource, type ServerWatch } from './types.js';
import type { NodeLocalVolumes } from './world-volumes.js';

/** The simulated cluster's nodes: `sim-node-1…` approved game nodes, then any not yet approved. */
export class SimulatedNodes implements ClusterNodes {
  /**
   * The simulated worlds are folders of this process, which every simulated node could reach; with
   * `sharedVolumes` false each folder stands for a node-local volume, and a move copies the world
   * into a new volume on the target node (`volumes`) as it would on a cluster of local disks.
   */
  readonly sharedVolumes: boolean;
  readonly volumes?: NodeLocalVolumes;
  #version = 0;
  #nodes = new Map<string, NodeResource>();
  #watchers = new Set<(event: NodeWatchEvent) => void>();
  #writable = true;
  readonly #check: () => void;
  readonly #place: (server: string, node: string | undefined) => ServerResource;

  readonly #running: (node: string) => string[];

  constructor(
    approved: number,
    pending: number,
    check: () => void,
    place: (server: string, node: string | undefined) => ServerResource,
    running: (node: string) => string[],
    volumes?: NodeLocalVolumes,
  ) {
    this.sharedVolumes = volumes === undefined;
    if (volumes) this.volumes = volumes;
    this.#check = check;
    this.#place = place;
    this.#running = running;
    for (let i = 1; i <= approved + pending; i += 1) this.addNode(`sim-node-${i}`, i <= approved);
  }

  /** Seeds a node (tests, `npm start`). */
  addNode(name: string, approved: boolean): NodeResource {
    const node: NodeResource = {
      name,
      ready: true,
      approved,
      unschedulable: false,
      capacity: { cpu: '8', memory: '32Gi' },
      allocatable: { cpu: '7500m', memory: '30Gi' },
      labels: { 'kubernetes.io/hostname': name, ...(approved ? { [GAME_NODE_LABEL]: 'true' } : {}) },
      resourceVersion: '',
    };
    this.#nodes.set(name, node);
    return this.#emit('ADDED', node);
  }

  /** Refuses node writes, as a cluster whose RBAC does not grant them. */
  setWritable(writable: boolean): void {
    this.#writable = writable;
  }

  setReady(name: string, ready: boolean): void {
    const node = this.#get(name);
    node.ready = ready;
    this.#emit('MODIFIED', node);
  }

  /** The current state of a node, or undefined. */
  node(name: string): NodeResource | undefined {
    const node = this.#nodes.get(name);
    return node && structuredClone(node);
  }

  /** Game nodes that take new servers now. */
  usable(): NodeResource[] {
    return [...this.#nodes.values()].filter((n) => n.approved && !n.unschedulable && n.ready);
  }

  async listNodes(): Promise<NodeList> {
    this.#check();
    return { nodes: [...this.#nodes.values()].map((n) => structuredClone(n)), resourceVersion: String(this.#version) };
  }

  watchNodes(_resourceVersion: string, onEvent: (event: NodeWatchEvent) => void): ServerWatch {
    // Writes are delivered synchronously: nothing can happen between a list and this call.
    this.#watchers.add(onEvent);
    return { stop: () => this.#watchers.delete(onEvent) };
  }

  async canWriteNodes(): Promise<boolean> {
    this.#check();
    return this.#writable;
  }

  async setGameNode(name: string, approved: boolean): Promise<NodeResource> {
    const node = this.#writableNode(name);
    node.approved = approved;
    if (approved) node.labels[GAME_NODE_LABEL] = 'true';
    else delete node.labels[GAME_NODE_LABEL];
    return this.#emit('MODIFIED', node);
  }

  async setUnschedulable(name: string, unschedulable: boolean): Promise<NodeResource> {
    const node = this.#writableNode(name);
    node.unschedulable = unschedulable;
    return this.#emit('MODIFIED', node);
  }

  async placeServer(server: string, node: string | undefined): Promise<ServerResource> {
    this.#check();
    if (node !== undefined) this.#get(node);
    return this.#place(server, node);
  }

  async serversRunningOn(node: string): Promise<string[]> {
    this.#check();
    return this.#running(node);
  }

  #writableNode(name: string): NodeResource {
    this.#check();
    const node = this.#get(name);
    if (!this.#writable) throw new ClusterForbiddenError(`nodes "${name}" is forbidden: cannot patch nodes`);
    return node;
  }

  #get(name: string): NodeResource {
    const node = this.#nodes.get(name);
    if (!node) throw new ClusterNotFoundError(`node ${name} not found`);
    return node;
  }

  #emit(type: 'ADDED' | 'MODIFIED', node: NodeResource): NodeResource {
    node.resourceVersion = String(++this.#version);
    for (const watcher of this.#watchers) watcher({ type, node: structuredClone(node) });
    return structuredClone(node);
  }
}
