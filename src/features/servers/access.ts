import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { isStaffRole } from '../accounts/index.js';
import { ownerOf } from './claims.js';

/** Whether the session is the server's owner or staff (who may run it, change it and use its console). */
export async function isOwnerOrStaff(deps: Pick<Deps, 'database'>, name: string, session: SessionContext): Promise<boolean> {
  if (isStaffRole(session.role)) return true;
  return (await ownerOf(deps.database.db, name)) === session.userId;
}

/** 403 unless the session is the server's owner or staff. */
export async function assertOwnerOrStaff(deps: Pick<Deps, 'database'>, name: string, session: SessionContext, what: string): Promise<void> {
  if (!(await isOwnerOrStaff(deps, name, session))) throw new DomainError('forbidden', `Only ${name}'s owner may ${what}.`);
}
