import type { ServerResource } from './types.js';

/**
 * A server's world on node-local volumes, as a server move copies it (src/features/nodes/moves.ts):
 * the volume that holds the world now, an empty one made on another node, and the switch of the
 * server to it. The bytes are copied by world jobs (archive on the old volume, restore on the new
 * one: world-jobs.ts, a plan's `volume`); this is only where the volumes are.
 */

/** A world volume: its claim name and the node it is bound to (unset: not bound yet, or anywhere). */
export interface WorldVolumeRef {
  claim: string;
  node?: string;
}

/** The claim of the StatefulSet's `world` template for pod 0: a server's volume until a move. */
export const defaultWorldClaim = (serverName: string) => `world-${serverName}-0`;

/** A move's claim: the server's name and the move's short id, a DNS label (at most 63 characters). */
export function moveClaimName(serverName: string, moveId: string): string {
  return `world-${serverName}`.slice(0, 54) + `-${moveId.slice(0, 8)}`;
}

export interface NodeLocalVolumes {
  /** The volume that holds the server's world now. ClusterNotFoundError for a server that is not there. */
  current(serverName: string): Promise<WorldVolumeRef>;
  /** Makes an empty volume `claim` bound to `node` for the server; one that exists already is kept (idempotent). */
  create(serverName: string, claim: string, node: string): Promise<void>;
  /**
   * The one committing step of a move: the server's world is `volume` from now on, and its pod is
   * pinned to `volume.node`. Idempotent; the old volume stays until the runner releases it.
   */
  switchTo(serverName: string, volume: Required<WorldVolumeRef>): Promise<ServerResource>;
  /**
   * Makes sure nothing the cluster keeps for the server still mounts another volume than `claim`
   * (Kubernetes: a StatefulSet made from the old claim template is deleted, to be made again from
   * the switched spec). Idempotent; switchTo tries it too, without failing the switch.
   */
  settle?(serverName: string, claim: string): Promise<void>;
}
