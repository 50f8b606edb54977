import { ApiException, AppsV1Api, CoreV1Api, type KubeConfig, type V1PersistentVolumeClaim, type V1StatefulSet } from '@kubernetes/client-node';
import type { Logger } from '../../../lib/logger.js';
import { DEFAULT_SERVER_RESOURCES, type ServerResource } from '../types.js';
import { defaultWorldClaim, type NodeLocalVolumes, type WorldVolumeRef } from '../world-volumes.js';
import { MANAGED_BY, SERVER_LABEL, toServerResource, type MinecraftServer, type MinecraftServerSpec } from './resource.js';

/**
 * Node-local world volumes on Kubernetes, for a server move: a claim made for the target node
 * (the annotation the scheduler itself writes for a WaitForFirstConsumer class, so the volume is
 * provisioned there, and the restore Job pinned to the node is its first consumer), and the switch
 * of the server to it: `spec.worldClaim` and `spec.nodeName` on the MinecraftServer, and a
 * StatefulSet still made from the old claim template deleted so that the controller makes it
 * again on the new claim (a StatefulSet's claim templates cannot change).
 */

/** Set on a claim to bind it on one node (what the scheduler writes for WaitForFirstConsumer). */
export const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';

/** The claim that holds the server's world now, and its node. */
export function worldVolumeOf(server: MinecraftServer): WorldVolumeRef {
  const ref: WorldVolumeRef = { claim: server.spec.worldClaim ?? defaultWorldClaim(server.metadata.name) };
  if (server.spec.nodeName) ref.node = server.spec.nodeName;
  return ref;
}

/** The claim a StatefulSet mounts as `world`: a pod volume's claim, or its claim template's for pod 0. */
export function claimOfStatefulSet(set: V1StatefulSet): string | undefined {
  const volume = set.spec?.template.spec?.volumes?.find((v) => v.name === 'world');
  if (volume?.persistentVolumeClaim) return volume.persistentVolumeClaim.claimName;
  const name = set.metadata?.name;
  return name && set.spec?.volumeClaimTemplates?.some((t) => t.metadata?.name === 'world') ? defaultWorldClaim(name) : undefined;
}

/** The empty claim of a move, bound to `node`, as big as the server's spec asks. */
export function moveClaimManifest(server: MinecraftServer, claim: string, node: string, storageClass?: string): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claim,
      labels: { [SERVER_LABEL]: server.metadata.name, ...MANAGED_BY },
      annotations: { [SELECTED_NODE_ANNOTATION]: node },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      ...(storageClass ? { storageClassName: storageClass } : {}),
      resources: { requests: { storage: server.spec.storage ?? DEFAULT_SERVER_RESOURCES.storage } },
    },
  };
}

export interface KubernetesWorldVolumesOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  getServerObject(name: string): Promise<MinecraftServer>;
  /** Merges into a server resource's spec (the adapter's own patch, with its conflict retries). */
  patchServerSpec(name: string, spec: Partial<MinecraftServerSpec> | Record<string, unknown>): Promise<MinecraftServer>;
  /** The storage class of a move's claim; unset: the cluster's default class (as the claim template). */
  storageClass?: string;
  log?: Logger;
}

const status = (err: unknown) => (err instanceof ApiException ? err.code : undefined);

export class KubernetesWorldVolumes implements NodeLocalVolumes {
  readonly #core: CoreV1Api;
  readonly #apps: AppsV1Api;
  readonly #o: KubernetesWorldVolumesOptions;

  constructor(options: KubernetesWorldVolumesOptions) {
    this.#o = options;
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#apps = options.kubeConfig.makeApiClient(AppsV1Api);
  }

  async current(serverName: string): Promise<WorldVolumeRef> {
    return worldVolumeOf(await this.#o.getServerObject(serverName));
  }

  async create(serverName: string, claim: string, node: string): Promise<void> {
    const server = await this.#o.getServerObject(serverName);
    try {
      await this.#core.createNamespacedPersistentVolumeClaim({ namespace: this.#o.namespace, body: moveClaimManifest(server, claim, node, this.#o.storageClass) });
    } catch (err) {
      if (status(err) !== 409) throw err;
      // Made by an earlier attempt: it must be bound where this move goes.
      const existing = await this.#core.readNamespacedPersistentVolumeClaim({ name: claim, namespace: this.#o.namespace });
      const bound = existing.metadata?.annotations?.[SELECTED_NODE_ANNOTATION];
      if (bound !== undefined && bound !== node) throw new Error(`claim ${claim} is bound to ${bound}, not ${node}`);
    }
  }

  async switchTo(serverName: string, volume: Required<WorldVolumeRef>): Promise<ServerResource> {
    // The patch is the commit; the stale StatefulSet goes now if it can, else when the move settles.
    const patched = await this.#o.patchServerSpec(serverName, { nodeName: volume.node, worldClaim: volume.claim });
    await this.settle(serverName, volume.claim).catch((err: unknown) =>
      this.#o.log?.warn({ err, server: serverName }, 'server move: the old StatefulSet could not be deleted yet; the move settles it before releasing the old claim'),
    );
    return toServerResource(patched);
  }

  settle(serverName: string, claim: string): Promise<void> {
    return this.#dropStaleStatefulSet(serverName, claim);
  }

  /**
   * A StatefulSet that still mounts another claim is deleted (the server is stopped: it has no
   * pod); the controller makes it again from the switched spec. The old claim is kept (its
   * retention policy) until the move releases it.
   */
  async #dropStaleStatefulSet(serverName: string, claim: string): Promise<void> {
    let set: V1StatefulSet;
    try {
      set = await this.#apps.readNamespacedStatefulSet({ name: serverName, namespace: this.#o.namespace });
    } catch (err) {
      if (status(err) === 404) return;
      throw err;
    }
    if (claimOfStatefulSet(set) === claim) return;
    try {
      await this.#apps.deleteNamespacedStatefulSet({ name: serverName, namespace: this.#o.namespace, body: { propagationPolicy: 'Background' } });
      this.#o.log?.info({ server: serverName, claim }, 'server move: the StatefulSet made from the old claim is deleted, to be made again on the new one');
    } catch (err) {
      if (status(err) !== 404) throw err;
    }
  }
}
