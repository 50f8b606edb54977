import { createHash } from 'node:crypto';
import type { V1OwnerReference, V1PodTemplateSpec, V1Service, V1StatefulSet } from '@kubernetes/client-node';
import { isQuantity, javaMemoryFor } from '../quantity.js';
import { DEFAULT_SERVER_RESOURCES } from '../types.js';
import {
  MANAGED_BY,
  MINECRAFT_SERVER_KIND,
  SERVER_LABEL,
  rconSecretName,
  type CrdCoordinates,
  type MinecraftServer,
} from './resource.js';

const GAME_PORT = 25565;
export const RCON_PORT = 25575;
/** The container of a server's pod that runs the game (its logs are the console). */
export const SERVER_CONTAINER = 'server';

/** Selects every workload object the controller made. */
export const MANAGED_SELECTOR = 'app.kubernetes.io/managed-by=felis';
/** The StatefulSet's annotation naming the pod template it was last given (a spec change differs). */
export const TEMPLATE_HASH_ANNOTATION = 'felis.dev/template-hash';
const IMAGE = /^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(@sha256:[a-f0-9]{64})?$/;

/** Why the spec can never start (so the start gives up at once), or undefined when it can. */
export function specProblem(server: MinecraftServer): string | undefined {
  const { spec } = server;
  if (!spec.image) return 'spec.image is not set';
  if (!IMAGE.test(spec.image)) return `spec.image ${spec.image} is not an image reference`;
  for (const [field, value] of [
    ['memory', spec.memory],
    ['heap', spec.heap],
    ['storage', spec.storage],
    ['resources.cpu', spec.resources?.cpu],
    ['resources.cpuRequest', spec.resources?.cpuRequest],
    ['resources.memoryRequest', spec.resources?.memoryRequest],
  ] as const) {
    if (value !== undefined && !isQuantity(value)) return `spec.${field} ${value} is not a quantity`;
  }
  if (!javaMemoryFor(spec.memory ?? DEFAULT_SERVER_RESOURCES.memory)) return `spec.memory ${spec.memory} is too small for a server`;
  return undefined;
}

function labelsOf(server: MinecraftServer): Record<string, string> {
  return { [SERVER_LABEL]: server.metadata.name, ...MANAGED_BY };
}

function ownerOf(server: MinecraftServer, crd: CrdCoordinates): V1OwnerReference[] {
  return [
    {
      apiVersion: `${crd.group}/${crd.version}`,
      kind: MINECRAFT_SERVER_KIND,
      name: server.metadata.name,
      uid: server.metadata.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
}

/**
 * The server's StatefulSet: one pod at most (replicas 0 or 1), its world on a volume from the claim
 * template, kept when the set is deleted (a retired server's world stays for its backups: Retain is
 * the default `persistentVolumeClaimRetentionPolicy`, left unset because server-side apply refuses
 * a field an older API server does not serve).
 */
export function statefulSetFor(server: MinecraftServer, crd: CrdCoordinates, replicas = 0, eula = false): V1StatefulSet {
  const { name } = server.metadata;
  const { spec } = server;
  const labels = labelsOf(server);
  const template = podTemplateFor(server, eula);
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, labels, ownerReferences: ownerOf(server, crd), annotations: { [TEMPLATE_HASH_ANNOTATION]: templateHash(template) } },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { [SERVER_LABEL]: name } },
      template,
      // A moved world is the claim its move made on the target node (world-volumes.ts), mounted
      // by the pod template; until a move, the claim template's own.
      ...(spec.worldClaim
        ? {}
        : {
            volumeClaimTemplates: [
              {
                metadata: { name: 'world', labels },
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: spec.storage ?? DEFAULT_SERVER_RESOURCES.storage } } },
              },
            ],
          }),
    },
  };
}

/** The server's pod: its image, memory, resources, RCON secret and world volume. */
/** `eula`: the operator accepted the Minecraft EULA (KUBE_EULA); the game is told only then. */
function podTemplateFor(server: MinecraftServer, eula: boolean): V1PodTemplateSpec {
  const { spec } = server;
  const memory = spec.memory ?? DEFAULT_SERVER_RESOURCES.memory;
  const labels = labelsOf(server);
  const secret = spec.rconSecretRef ?? { name: rconSecretName(server.metadata.name), key: 'password' };
  return {
    metadata: { labels },
    spec: {
      terminationGracePeriodSeconds: 60,
      enableServiceLinks: false,
      automountServiceAccountToken: false,
      ...(spec.nodeName ? { nodeSelector: { 'kubernetes.io/hostname': spec.nodeName } } : {}),
      securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, runAsNonRoot: true },
      ...(spec.worldClaim ? { volumes: [{ name: 'world', persistentVolumeClaim: { claimName: spec.worldClaim } }] } : {}),
      containers: [
        {
          name: SERVER_CONTAINER,
          image: spec.image,
          env: [
            { name: 'EULA', value: eula ? 'TRUE' : 'FALSE' },
            { name: 'MEMORY', value: spec.heap ?? javaMemoryFor(memory) },
            { name: 'ENABLE_RCON', value: 'true' },
            { name: 'RCON_PORT', value: String(RCON_PORT) },
            { name: 'RCON_PASSWORD', valueFrom: { secretKeyRef: { name: secret.name, key: secret.key } } },
          ],
          ports: [
            // The protocol is the default, named because server-side apply keys these by port and protocol.
            { name: 'minecraft', containerPort: GAME_PORT, protocol: 'TCP' },
            { name: 'rcon', containerPort: RCON_PORT, protocol: 'TCP' },
          ],
          resources: {
            limits: { memory, ...(spec.resources?.cpu ? { cpu: spec.resources.cpu } : {}) },
            requests: {
              memory: spec.resources?.memoryRequest ?? memory,
              ...(spec.resources?.cpuRequest ? { cpu: spec.resources.cpuRequest } : {}),
            },
          },
          volumeMounts: [{ name: 'world', mountPath: '/data' }],
          readinessProbe: { tcpSocket: { port: GAME_PORT }, periodSeconds: 5, failureThreshold: 3 },
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  };
}

/**
 * What the controller applies to a server's StatefulSet (server-side apply, the whole object it
 * owns, so a field it stops sending goes): `replicas`, and the spec's current pod template when
 * `roll` (a start) or when there is no set yet. Otherwise the set keeps the template it carries,
 * since a template never changes under a running server; and an existing set keeps its claim
 * templates, which Kubernetes does not let change.
 */
export function appliedStatefulSet(server: MinecraftServer, crd: CrdCoordinates, replicas: number, current: V1StatefulSet | undefined, roll: boolean, eula = false): V1StatefulSet {
  const desired = statefulSetFor(server, crd, replicas, eula);
  if (!current?.spec) return desired;
  // What the set carries, as it was sent: no server-written metadata (creationTimestamp) or status.
  desired.spec!.volumeClaimTemplates = current.spec.volumeClaimTemplates?.map((claim) => ({
    metadata: { name: claim.metadata?.name, ...(claim.metadata?.labels ? { labels: claim.metadata.labels } : {}) },
    spec: claim.spec,
  }));
  if (!roll || specProblem(server)) {
    // The pod spec it carries, under our own template metadata (so an annotation another manager
    // put on the template, such as `kubectl rollout restart`'s, is never taken over).
    desired.spec!.template = { metadata: desired.spec!.template.metadata, spec: current.spec.template.spec };
    const hash = current.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION];
    desired.metadata!.annotations = hash ? { [TEMPLATE_HASH_ANNOTATION]: hash } : {};
  }
  return desired;
}

/** Whether a StatefulSet carries the pod template of the server's spec as it is now. */
export function carriesCurrentTemplate(server: MinecraftServer, set: V1StatefulSet, eula = false): boolean {
  return set.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION] === templateHash(podTemplateFor(server, eula));
}

/** A fingerprint of a pod template, to tell whether a StatefulSet carries the spec's current one. */
export function templateHash(template: V1PodTemplateSpec): string {
  return createHash('sha256').update(JSON.stringify(template)).digest('hex').slice(0, 32);
}

/** The server's Service: the game port for the proxy, RCON for the control plane. */
export function serviceFor(server: MinecraftServer, crd: CrdCoordinates): V1Service {
  const { name } = server.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, labels: labelsOf(server), ownerReferences: ownerOf(server, crd) },
    spec: {
      type: 'ClusterIP',
      selector: { [SERVER_LABEL]: name },
      ports: [
        { name: 'minecraft', port: GAME_PORT, targetPort: 'minecraft', protocol: 'TCP' },
        { name: 'rcon', port: RCON_PORT, targetPort: 'rcon', protocol: 'TCP' },
      ],
    },
  };
}
