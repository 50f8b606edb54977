import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import type { SessionContext } from '../../http/session.js';
import { isStaffRole } from '../accounts/index.js';
import type { CachedServer } from '../servers/index.js';
import { ownerOf, requireServer, syncedCache } from '../servers/index.js';
import type { WorldFolders } from './runtime.js';

/** The server of a world route, its owner, and whether the caller is staff: owner or staff only. */
export async function requireWorld(
  deps: Pick<Deps, 'database' | 'cluster' | 'config'>,
  name: string,
  session: SessionContext,
): Promise<{ server: CachedServer; owner: string | undefined; staff: boolean }> {
  const server = await requireServer(deps, name);
  const owner = await ownerOf(deps.database.db, name);
  const staff = isStaffRole(session.role);
  if (owner !== session.userId && !staff) throw new DomainError('forbidden', `Only ${name}'s owner or staff may do this.`);
  return { server, owner, staff };
}

/** 409 not_stopped unless the server is down and meant to stay down (read fresh from the cache). */
export async function requireStopped(deps: Pick<Deps, 'cluster' | 'config'>, name: string): Promise<void> {
  const server = (await syncedCache(deps)).get(name);
  if (!server) throw new DomainError('not_found', `No server named ${name}.`);
  const { spec, status } = server.resource;
  if (status.phase !== 'Stopped' || spec.desiredState === 'Running') {
    throw new DomainError('not_stopped', `${name} must be stopped first (it is ${status.phase}).`);
  }
}

/** The world folders this process can reach, or 503 (worlds on cluster volumes are reached by jobs). */
export function localFolders(deps: Pick<Deps, 'worlds'>): WorldFolders {
  if (!deps.worlds.folders) throw new DomainError('unavailable', 'World files cannot be reached from this service.');
  return deps.worlds.folders;
}
