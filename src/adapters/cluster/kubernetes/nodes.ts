import { ApiException, AuthorizationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import type { Logger } from '../../../lib/logger.js';
import { ClusterForbiddenError, GAME_NODE_LABEL, type ClusterNodes, type NodeList, type NodeResource, type NodeWatchEvent } from '../nodes.js';
import { ClusterNotFoundError, type ServerResource, type ServerWatch } from '../types.js';
import type { NodeLocalVolumes } from '../world-volumes.js';
import { SERVER_LABEL, toServerResource, type MinecraftServer, type MinecraftServerSpec } from './resource.js';
import { resumableWatch } from './watch.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The pod template's selector of a pinned server: the node's own hostname label. */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

export function toNodeResource(node: V1Node): NodeResource {
  const labels = { ...node.metadata?.labels };
  const quantities = (q: Record<string, string> | undefined) => ({ cpu: q?.cpu ?? '0', memory: q?.memory ?? '0' });
  return {
    name: node.metadata?.name ?? '',
    ready: node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    approved: labels[GAME_NODE_LABEL] === 'true',
    unschedulable: node.spec?.unschedulable === true,
    capacity: quantities(node.status?.capacity),
    allocatable: quantities(node.status?.allocatable),
    labels,
    resourceVersion: node.metadata?.resourceVersion ?? '',
  };
}

function translate(err: unknown, what: string): never {
  const status = err instanceof ApiException ? err.code : undefined;
  if (status === 404) throw new ClusterNotFoundError(`${what} not found`, { cause: err });
  if (status === 403) throw new ClusterForbiddenError(`${what}: forbidden`, { cause: err });
  throw err;
}

export interface KubernetesNodesOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** Merges into a server resource's spec (the adapter's own patch, with its conflict retries). */
  patchServerSpec(name: string, spec: Partial<MinecraftServerSpec> | Record<string, unknown>): Promise<MinecraftServer>;
  getServerObject?(name: string): Promise<MinecraftServer>;
  /** A core Event on the server (the adapter's recordServerEvent: aggregated, from this replica's pod). */
  recordServerEvent?(server: MinecraftServer, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
  /** Worlds on network storage that every node mounts: a move changes only the placement. */
  sharedVolumes?: boolean;
  /** Where worlds are node-local: the volumes a move copies a world between (world-volumes.ts). */
  volumes?: NodeLocalVolumes;
  log?: Logger;
}

/**
 * Nodes on a real Kubernetes API: approval is the GAME_NODE_LABEL label, a cordon is
 * `spec.unschedulable`, a server's placement is its resource's `spec.nodeName`, which the
 * controller turns into the pod's node selector.
 */
export class KubernetesNodes implements ClusterNodes {
  readonly sharedVolumes: boolean;
  readonly volumes?: NodeLocalVolumes;
  readonly #core: CoreV1Api;
  readonly #authz: AuthorizationV1Api;
  readonly #options: KubernetesNodesOptions;

  constructor(options: KubernetesNodesOptions) {
    this.#options = options;
    this.sharedVolumes = options.sharedVolumes ?? false;
    if (!this.sharedVolumes && options.volumes) this.volumes = options.volumes;
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#authz = options.kubeConfig.makeApiClient(AuthorizationV1Api);
  }

  async listNodes(): Promise<NodeList> {
    const list = await this.#core.listNode();
    return { nodes: list.items.map(toNodeResource), resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  watchNodes(resourceVersion: string, onEvent: (event: NodeWatchEvent) => void, onError: (err: Error) => void): ServerWatch {
    const watch = resumableWatch<V1Node>({
      kubeConfig: this.#options.kubeConfig,
      path: '/api/v1/nodes',
      fromVersion: resourceVersion,
      onEvent: (type, node) => {
        if (type === 'DELETED') onEvent({ type, name: node.metadata?.name ?? '', resourceVersion: node.metadata?.resourceVersion ?? '' });
        else onEvent({ type, node: toNodeResource(node) });
      },
      onExpired: onError,
      log: this.#options.log,
    });
    return { stop: () => watch.stop() };
  }

  /** Asks the API server whether this identity may patch nodes (a SelfSubjectAccessReview). */
  async canWriteNodes(): Promise<boolean> {
    const review = await this.#authz.createSelfSubjectAccessReview({
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'patch', resource: 'nodes' } } },
    });
    return review.status?.allowed === true;
  }

  setGameNode(name: string, approved: boolean): Promise<NodeResource> {
    return this.#patch(name, { metadata: { labels: { [GAME_NODE_LABEL]: approved ? 'true' : null } } });
  }

  /** Cordons or uncordons; each server whose pod runs there gets an Event saying so (NodeCordoned, NodeReturned). */
  async setUnschedulable(name: string, unschedulable: boolean): Promise<NodeResource> {
    const node = await this.#patch(name, { spec: { unschedulable: unschedulable ? true : null } });
    const pods = await this.#serverPodsOn(name).catch((err: unknown) => {
      this.#options.log?.warn({ err, node: name }, 'node task: the pods on the node could not be listed for their Events');
      return [];
    });
    for (const [server, pod] of pods) {
      await (unschedulable
        ? this.note(server, 'Normal', 'NodeCordoned', `node ${name} is cordoned: pod ${pod} keeps running there, nothing new is placed there`)
        : this.note(server, 'Normal', 'NodeReturned', `node ${name} takes new servers again (pod ${pod} runs there)`));
    }
    return node;
  }

  async note(serverName: string, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const { recordServerEvent, getServerObject } = this.#options;
    if (!recordServerEvent || !getServerObject) return;
    try {
      await recordServerEvent(await getServerObject(serverName), type, reason, message);
    } catch (err) {
      this.#options.log?.warn({ err, server: serverName, reason }, 'node control: an Event could not be recorded');
    }
  }

  /** A move on shared volumes: only the placement changes (the pod runs on `node` at its next start). */
  async placeServer(server: string, node: string | undefined): Promise<ServerResource> {
    return toServerResource(await this.#options.patchServerSpec(server, { nodeName: node ?? null }));
  }

  async serversRunningOn(node: string): Promise<string[]> {
    return [...new Set((await this.#serverPodsOn(node)).map(([server]) => server))];
  }

  /** The servers' pods on the node: [server, pod name]. */
  async #serverPodsOn(node: string): Promise<Array<[string, string]>> {
    const pods = await this.#core.listNamespacedPod({ namespace: this.#options.namespace, labelSelector: SERVER_LABEL, fieldSelector: `spec.nodeName=${node}` });
    return pods.items.flatMap((p) => {
      const server = p.metadata?.labels?.[SERVER_LABEL];
      return server ? [[server, p.metadata?.name ?? ''] as [string, string]] : [];
    });
  }

  async #patch(name: string, body: object): Promise<NodeResource> {
    try {
      return toNodeResource(await this.#core.patchNode({ name, body }, mergePatch));
    } catch (err) {
      translate(err, `node ${name}`);
    }
  }
}
