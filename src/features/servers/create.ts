import { ClusterConflictError, DEFAULT_SERVER_RESOURCES, type ServerSpec } from '../../adapters/cluster/types.js';
import { formatImageRef } from '../../adapters/registry/types.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { canonicalImageRef, ensureWhitelisted, isPlatformImage, isWhitelisted, resolveDigest } from '../images/index.js';
import { ownerOf } from './ownership/index.js';
import { syncedCache } from './core/index.js';
import { isReservedServerName } from './core/index.js';
import type { CreateServerInput } from './core/index.js';
import { DEFAULT_IMAGE_SETTING, seedSetting } from './wakes/index.js';
import type { ServersParts } from './core/index.js';

/** Hosts of the platform itself under ROOT_DOMAIN: no server may take them as its subdomain. */
const RESERVED_SUBDOMAINS = new Set(['api', 'api-internal', 'panel', 'console', 'www', 'registry']);

export type CreateDeps = Pick<Deps, 'database' | 'registry' | 'cluster' | 'clock' | 'config'> & ServersParts;

/**
 * The platform default image: the `platform_default_image` setting, seeded from DEFAULT_IMAGE and
 * whitelisted the first time it is needed (at start-up, or by the first create on a fresh install).
 */
export async function platformDefaultImage(deps: Pick<Deps, 'database' | 'clock' | 'config'>): Promise<string> {
  const now = deps.clock.now();
  const { text } = canonicalImageRef(deps.config.defaultImage);
  const image = await seedSetting(deps.database.db, DEFAULT_IMAGE_SETTING, text, now);
  await ensureWhitelisted(deps.database.db, image, now);
  return image;
}

/** The image a server runs: whitelisted, and pinned to its digest when it is a platform image. */
export async function imageFor(deps: CreateDeps, requested: string | undefined): Promise<string> {
  const { ref } = canonicalImageRef(requested ?? (await platformDefaultImage(deps)));
  if (!(await isWhitelisted(deps.database.db, ref))) {
    throw new DomainError('image_not_whitelisted', `${formatImageRef(ref)} is not an enabled whitelisted image.`);
  }
  if (!isPlatformImage(deps.registry, ref)) return formatImageRef(ref);
  const digest = await resolveDigest(deps.registry, ref);
  return formatImageRef({ registry: ref.registry, repository: ref.repository, tag: ref.tag ?? 'latest', digest });
}

/** One value from a field the contract spells one way and the original panel another; both is 400. */
function eitherSpelling<T>(contract: T | undefined, original: T | undefined, names: string): T | undefined {
  if (contract !== undefined && original !== undefined) throw new DomainError('bad_request', `Give ${names} in one spelling, not both.`);
  return contract ?? original;
}

export async function createServer(deps: CreateDeps, body: CreateServerInput): Promise<ServerSpec> {
  const resourcesIn = body.resources ?? {};
  const input = {
    ...body,
    display_name: eitherSpelling(body.display_name, body.displayName, 'display_name/displayName'),
    autostart_policy: eitherSpelling(body.autostart_policy, body.autostartPolicy, 'autostart_policy/autostartPolicy'),
    resources: {
      ...resourcesIn,
      cpu_request: eitherSpelling(resourcesIn.cpu_request, resourcesIn.cpuRequest, 'resources.cpu_request/cpuRequest'),
      memory_request: eitherSpelling(resourcesIn.memory_request, resourcesIn.memoryRequest, 'resources.memory_request/memoryRequest'),
    },
  };
  if (isReservedServerName(input.name)) throw new DomainError('bad_name', `${input.name} is reserved for a system server.`);
  if (isReservedServerName(input.subdomain) || RESERVED_SUBDOMAINS.has(input.subdomain)) {
    throw new DomainError('bad_name', `The subdomain ${input.subdomain} is reserved.`);
  }
  const { memory: topMemory, resources } = input;
  if (topMemory !== undefined && resources.memory !== undefined && topMemory !== resources.memory) {
    throw new DomainError('bad_request', 'memory and resources.memory differ; give one.');
  }
  const cache = await syncedCache(deps);
  if (cache.get(input.name)) throw new DomainError('conflict', `A server named ${input.name} exists.`);
  if (cache.byHost(input.subdomain)) throw new DomainError('conflict', `The subdomain ${input.subdomain} is taken.`);
  // A server the cluster no longer knows whose claim remains (a simulated cluster on PostgreSQL
  // forgets its servers at a restart; a resource deleted without its finalizer): a new server of
  // the name would be handed, with the old world, to the old owner.
  if ((await ownerOf(deps.database.db, input.name)) !== undefined) {
    throw new DomainError('conflict', `The rows of an earlier server named ${input.name} remain (its owner); choose another name.`);
  }
  const image = await imageFor(deps, input.image);
  const spec: ServerSpec = {
    name: input.name,
    subdomain: input.subdomain,
    image,
    memory: resources.memory ?? topMemory ?? DEFAULT_SERVER_RESOURCES.memory,
    storage: input.storage ?? DEFAULT_SERVER_RESOURCES.storage,
    cpu: resources.cpu ?? DEFAULT_SERVER_RESOURCES.cpu,
    desiredState: 'Stopped',
    labels: {},
  };
  if (input.display_name) spec.displayName = input.display_name;
  if (resources.cpu_request) spec.cpuRequest = resources.cpu_request;
  if (resources.memory_request) spec.memoryRequest = resources.memory_request;
  if (input.autostart_policy) spec.autostartPolicy = input.autostart_policy;
  try {
    return (await deps.cluster.createServer(spec)).spec;
  } catch (err) {
    if (err instanceof ClusterConflictError) throw new DomainError('conflict', `A server named ${input.name} exists.`);
    throw new DomainError('unavailable', 'The cluster cannot be reached.', { cause: err });
  }
}
