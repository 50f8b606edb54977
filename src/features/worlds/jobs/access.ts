import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import type { SessionContext } from '../../../http/session.js';
import { isStaffRole } from '../../accounts/index.js';
import { requireAccess, requireServer, syncedCache, type Need, type ServerAccess } from '../../servers/index.js';
import type { ServersParts } from '../../servers/index.js';

/** Who asks, as the worlds' rules see them: a signed-in account and its role. */
export type Caller = Pick<SessionContext, 'userId' | 'role'>;

export const isStaff = (caller: Caller) => isStaffRole(caller.role);

/**
 * A world the caller may touch as `need` says (the access rule: owner, staff, or a member with that
 * permission; 404 without the server), with its owner.
 */
export async function requireWorld(deps: Pick<Deps, 'database' | 'cluster' | 'config'> & ServersParts, name: string, caller: Caller, need: Need): Promise<ServerAccess> {
  await requireServer(deps, name);
  return requireAccess(deps, name, caller, need, `Only ${name}'s owner or staff may do this.`);
}

/** 409 not_stopped unless the server is down and meant to stay down (read fresh from the cache). */
export async function requireStopped(deps: Pick<Deps, 'cluster' | 'config'> & ServersParts, name: string): Promise<void> {
  const server = (await syncedCache(deps)).get(name);
  if (!server) throw new DomainError('not_found', `No server named ${name}.`);
  const { spec, status } = server.resource;
  if (status.phase !== 'Stopped' || spec.desiredState === 'Running') {
    throw new DomainError('not_stopped', `${name} must be stopped first (it is ${status.phase}).`);
  }
}

/**
 * A stopped world the caller may touch, and the way to its volume (`reach`): owner or staff, then
 * 503 when the volume cannot be reached, then 409 not_stopped.
 */
export async function requireStoppedWorld<T>(deps: Pick<Deps, 'database' | 'cluster' | 'config'> & ServersParts, name: string, caller: Caller, need: Need, reach: () => T): Promise<T> {
  await requireWorld(deps, name, caller, need);
  const reached = reach();
  await requireStopped(deps, name);
  return reached;
}
