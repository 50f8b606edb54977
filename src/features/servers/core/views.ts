import { javaMemoryFor } from '../../../adapters/cluster/quantity.js';
import { FORWARDING_LABEL, SYSTEM_LABEL, type ServerResource } from '../../../adapters/cluster/types.js';
import { isReservedServerName } from './names.js';
import type { ServerInfo } from './schema.js';

/** A platform system service, by its label: the fleet shows it as one, and nobody may claim it. */
export function isSystemServer(resource: ServerResource): boolean {
  return resource.spec.labels[SYSTEM_LABEL] === 'true';
}

/**
 * Reserved for the platform: a system server, or one under a reserved name. No player reaches it:
 * per-server routes and the proxy's lookup by host answer 404, the lobby menu leaves it out.
 */
export function isReservedServer(resource: ServerResource): boolean {
  return isSystemServer(resource) || isReservedServerName(resource.spec.name);
}

/** A server resource as ServerInfo: optional fields are absent (never null) when unset. */
export function toServerInfo(resource: ServerResource): ServerInfo {
  const { spec, status } = resource;
  const info: ServerInfo = {
    name: spec.name,
    subdomain: spec.subdomain,
    phase: status.phase,
    ready: status.ready,
    playersOnline: status.playersOnline,
    playersMax: status.playersMax,
    idleStopSeconds: status.idleStopSeconds,
  };
  if (spec.autostartPolicy) info.autostartPolicy = spec.autostartPolicy;
  if (spec.desiredState) info.desiredState = spec.desiredState;
  if (status.endpointMode) info.endpointMode = status.endpointMode;
  if (status.endpointAddress) info.endpointAddress = status.endpointAddress;
  if (spec.displayName) info.displayName = spec.displayName;
  if (spec.image) info.image = spec.image;
  if (spec.memory) {
    info.memory = spec.memory;
    const java = javaMemoryFor(spec.memory);
    if (java) info.javaMemory = java;
  }
  if (spec.storage) info.storageSize = spec.storage;
  if (spec.cpu) info.cpu = spec.cpu;
  if (status.playerCountUnknown) info.playerCountUnknown = true;
  if (spec.labels[FORWARDING_LABEL] === 'legacy') info.legacyForwarding = true;
  if (status.autoRestarts > 0) info.autoRestarts = status.autoRestarts;
  if (status.startGaveUp) info.startGaveUp = true;
  return info;
}
