import { ClusterNotFoundError } from '../../../adapters/cluster/types.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { type CachedServer, type ServerCache } from './cache.js';
import { normalizeHost } from './names.js';
import type { ServersParts } from './cache.js';

type CacheDeps = Pick<Deps, 'cluster' | 'config'> & ServersParts;

/** The synced cache; 503 while the cluster cannot be listed. */
export async function syncedCache(deps: CacheDeps): Promise<ServerCache> {
  const cache = deps.serverCache;
  if (!cache.synced) {
    try {
      await cache.ready();
    } catch (err) {
      throw new DomainError('unavailable', 'The cluster cannot be reached.', { cause: err });
    }
  }
  return cache;
}

/** A per-server route's server: 404 for unknown names and for the servers reserved for the platform. */
export async function requireServer(deps: CacheDeps, name: string): Promise<CachedServer> {
  return reachableByName(await syncedCache(deps), name);
}

/**
 * `requireServer` for the proxy's hot status read: answered synchronously from the synced cache;
 * only before the first list does it wait.
 */
export function serverByName(deps: CacheDeps, name: string): CachedServer | Promise<CachedServer> {
  const cache = deps.serverCache;
  if (cache.synced) return reachableByName(cache, name);
  return syncedCache(deps).then((synced) => reachableByName(synced, name));
}

function reachableByName(cache: ServerCache, name: string): CachedServer {
  const server = cache.get(name);
  if (!server || server.reserved) throw new DomainError('not_found', `No server named ${name}.`);
  return server;
}

/**
 * The server a connecting hostname names, never one reserved for the platform. The proxy's hot
 * path: answered synchronously from the synced cache; only before the first list does it wait.
 */
export function serverByHost(deps: CacheDeps, host: string): CachedServer | Promise<CachedServer> {
  const cache = deps.serverCache;
  if (cache.synced) return reachableByHost(cache, host, deps.config.rootDomain);
  return syncedCache(deps).then((synced) => reachableByHost(synced, host, deps.config.rootDomain));
}

function reachableByHost(cache: ServerCache, host: string, rootDomain: string | undefined): CachedServer {
  const server = cache.byHost(host);
  if (!server || server.reserved) {
    // Judged only on a miss, so the hot path pays nothing for it.
    if (outsideRootDomain(host, rootDomain)) throw new DomainError('bad_host', 'The host is not under the root domain.');
    throw new DomainError('not_found', 'No server has this host.');
  }
  return server;
}

/**
 * A dotted host that is not the root domain or under it (as the original's by-host: 400 bad_host). A
 * bare label is a subdomain, which the contract lets the proxy send; without a root domain every
 * host is judged by the cache alone.
 */
function outsideRootDomain(host: string, rootDomain: string | undefined): boolean {
  if (rootDomain === undefined) return false;
  const h = normalizeHost(host);
  if (!h.includes('.')) return false;
  const root = rootDomain.toLowerCase();
  return h !== root && !h.endsWith(`.${root}`);
}

/** Runs a cluster call; its failures leave as 404 (vanished) or 503 (unreachable). */
export async function clusterCall<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    if (err instanceof ClusterNotFoundError) throw new DomainError('not_found', `No server named ${name}.`);
    throw new DomainError('unavailable', 'The cluster cannot be reached.', { cause: err });
  }
}
