import { and, asc, count, eq, isNull, ne } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { linkedAccounts, users, type UserRole } from '../../db/schema/accounts.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import type { SessionContext } from '../../http/session.js';
import { isStaffRole } from './authenticator.js';
import { findUserById } from './users-service.js';
import { toUserDetail, toUserView } from './views.js';

type UserRow = NonNullable<Awaited<ReturnType<typeof findUserById>>>;

export async function serverCountsOf(deps: Pick<Deps, 'serverCounts'>, db: Queryable, ids: string[]): Promise<Map<string, number>> {
  if (!deps.serverCounts || ids.length === 0) return new Map();
  return deps.serverCounts(db, ids);
}

export async function userView(deps: Pick<Deps, 'serverCounts'>, db: Queryable, row: UserRow) {
  const counts = await serverCountsOf(deps, db, [row.id]);
  return toUserView(row, counts.get(row.id) ?? 0);
}

export async function userDetail(deps: Pick<Deps, 'serverCounts'>, db: Queryable, row: UserRow) {
  const counts = await serverCountsOf(deps, db, [row.id]);
  const links = await db
    .select({ mcUuid: linkedAccounts.mcUuid, authSource: linkedAccounts.authSource, verifiedAt: linkedAccounts.verifiedAt })
    .from(linkedAccounts)
    .where(eq(linkedAccounts.userId, row.id))
    .orderBy(asc(linkedAccounts.verifiedAt));
  return toUserDetail(row, counts.get(row.id) ?? 0, links);
}

/** A live (not deleted) user, or 404. */
export async function liveUserOr404(db: Queryable, id: string): Promise<UserRow> {
  const row = await findUserById(db, id);
  if (!row || row.deletedAt !== null) throw new DomainError('not_found', 'No such user.');
  return row;
}

/**
 * Who may manage whom: admins manage players; only an owner grants, changes or takes away staff
 * roles and disables or deletes staff.
 */
export function assertMayManage(actor: SessionContext, target: { role: UserRole }, newRole?: UserRole): void {
  if (actor.role === 'owner') return;
  if (isStaffRole(target.role) || (newRole !== undefined && isStaffRole(newRole))) {
    throw new DomainError('forbidden', 'Only an owner may manage staff accounts or grant staff roles.');
  }
}

/**
 * The last live, enabled owner cannot be demoted, disabled or deleted. Called inside the
 * transaction that changes the row, after locking the owners, so two owners demoting each other
 * at once cannot both succeed.
 */
export async function assertNotLastOwner(tx: Queryable, target: UserRow): Promise<void> {
  if (target.role !== 'owner') return;
  await tx
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.role, 'owner'), isNull(users.deletedAt)))
    .for('update');
  const [others] = await tx
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.role, 'owner'), isNull(users.deletedAt), eq(users.disabled, false), ne(users.id, target.id)));
  if ((others?.n ?? 0) === 0) throw new DomainError('protected_admin', 'The last owner cannot be demoted, disabled or deleted.');
}
