import { LABEL_DOMAIN, type ServerResource, type ServerWatch } from './types.js';
import type { NodeLocalVolumes } from './world-volumes.js';

/**
 * The cluster's nodes as the control plane sees them, and the placement of a server on one. Shaped
 * like the servers: a list with a version, then a watch from it that feeds a cache (the nodes
 * feature's); writes go straight to the cluster and come back through the watch.
 */

/** `felis.dev/game-node=true`: the node is approved to host game servers. */
export const GAME_NODE_LABEL = `${LABEL_DOMAIN}/game-node`;

export interface NodeQuantities {
  /** Cores, as the orchestrator writes them (`4`, `3500m`). */
  cpu: string;
  /** Bytes, as the orchestrator writes them (`16Gi`, `16318480Ki`). */
  memory: string;
}

export interface NodeResource {
  name: string;
  /** The node's Ready condition is True. */
  ready: boolean;
  /** Labelled a game node (GAME_NODE_LABEL). */
  approved: boolean;
  /** Cordoned: nothing new is scheduled there (Kubernetes `spec.unschedulable`). */
  unschedulable: boolean;
  capacity: NodeQuantities;
  allocatable: NodeQuantities;
  labels: Record<string, string>;
  resourceVersion: string;
}

export type NodeWatchEvent =
  | { type: 'ADDED' | 'MODIFIED'; node: NodeResource }
  | { type: 'DELETED'; name: string; resourceVersion: string };

export interface NodeList {
  nodes: NodeResource[];
  resourceVersion: string;
}

/** The cluster refused a write for want of permission (RBAC): node control is not available. */
export class ClusterForbiddenError extends Error {
  override name = 'ClusterForbiddenError';
}

export interface ClusterNodes {
  listNodes(): Promise<NodeList>;
  /** Streams changes after `resourceVersion`; `onError` means the watch ended and the caller lists again. */
  watchNodes(resourceVersion: string, onEvent: (event: NodeWatchEvent) => void, onError: (err: Error) => void): ServerWatch;
  /** Whether the cluster lets the control plane label and cordon nodes (false when RBAC refuses). */
  canWriteNodes(): Promise<boolean>;
  /** Approves the node as a game node (its label) or takes the approval away. ClusterNotFoundError, ClusterForbiddenError. */
  setGameNode(name: string, approved: boolean): Promise<NodeResource>;
  /** Cordons or uncordons the node. ClusterNotFoundError, ClusterForbiddenError. */
  setUnschedulable(name: string, unschedulable: boolean): Promise<NodeResource>;
  /** Pins the server's pod (and so its world volume) to a node, or lets it go anywhere (`undefined`). */
  placeServer(server: string, node: string | undefined): Promise<ServerResource>;
  /** The servers whose pod is on the node now (pinned or not). */
  serversRunningOn(node: string): Promise<string[]>;
  /** Every node reaches every world volume (network storage): a move changes only the placement. */
  readonly sharedVolumes: boolean;
  /** Where worlds are node-local volumes (not sharedVolumes): the volumes a move copies a world between. */
  readonly volumes?: NodeLocalVolumes;
  /**
   * Records what a node task or a move did to a server where the cluster keeps such things (a core
   * Event on the server, aggregated, on Kubernetes); never fails.
   */
  note?(serverName: string, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}
