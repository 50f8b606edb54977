import { and, asc, count, eq, isNull, ne, sql, type SQL } from 'drizzle-orm';
import type { Queryable, Transaction } from '../../db/client.js';
import { containsPattern } from '../../db/like.js';
import { linkedAccounts, userQuotas, users, type UserRole } from '../../db/schema/accounts.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { primarySource, readAuthSources } from '../runtime-settings/index.js';
import { writeAudit } from '../audit/index.js';
import { getQuota, type Quota } from './directory.js';
import { isStaffRole } from './roles.js';
import { listLiveSessions, revokeSession, revokeUserSessions } from './sessions/index.js';
import { revokeUserApiKeys } from './keys/index.js';
import { findUserById, uniqueViolation, type UserRow } from './users.js';
import { toSessionView, toUserDetail, toUserView } from './views.js';
import type { AccountsParts } from './parts.js';

/**
 * Staff tools over accounts: users, their quotas, sessions, passkeys and game identities. Every
 * change runs in one transaction with its audit row; `actor` is the staff session.
 */

type AdminDeps = Pick<Deps & AccountsParts, 'database' | 'clock' | 'serverCounts'>;

async function serverCountsOf(deps: Pick<Deps & AccountsParts, 'serverCounts'>, db: Queryable, ids: string[]): Promise<Map<string, number>> {
  if (!deps.serverCounts || ids.length === 0) return new Map();
  return deps.serverCounts(db, ids);
}

async function userView(deps: Pick<Deps & AccountsParts, 'serverCounts'>, db: Queryable, row: UserRow) {
  const counts = await serverCountsOf(deps, db, [row.id]);
  return toUserView(row, counts.get(row.id) ?? 0);
}

/** A live (not deleted) user, or 404. */
async function liveUserOr404(db: Queryable, id: string): Promise<UserRow> {
  const row = await findUserById(db, id);
  if (!row || row.deletedAt !== null) throw new DomainError('not_found', 'No such user.');
  return row;
}

/**
 * Who may manage whom: admins manage players; only an owner grants, changes or takes away staff
 * roles and disables or deletes staff.
 */
function assertMayManage(actor: SessionContext, target: { role: UserRole }, newRole?: UserRole): void {
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
async function assertNotLastOwner(tx: Queryable, target: UserRow): Promise<void> {
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

const takenConflict = () => new DomainError('conflict', 'That username or e-mail address is taken.');

/** A unique username or address taken by another account becomes 409 conflict. */
async function unlessTaken<T>(work: Promise<T>, conflict: () => DomainError = takenConflict): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (uniqueViolation(err) !== undefined) throw conflict();
    throw err;
  }
}

export interface UserFilter {
  /** Part of the username or address, any case; `%` and `_` match literally. */
  query?: string;
  role?: UserRole;
  disabled?: boolean;
  limit: number;
  offset: number;
}

/** Accounts that are not deleted, oldest first, one page; `total` counts every match. */
export async function listUsers(deps: Pick<Deps & AccountsParts, 'database' | 'serverCounts'>, filter: UserFilter) {
  const db = deps.database.db;
  const text = filter.query?.trim();
  const where: SQL | undefined = and(
    isNull(users.deletedAt),
    text ? sql`(${users.username} ilike ${containsPattern(text)} or coalesce(${users.email}, '') ilike ${containsPattern(text)})` : undefined,
    filter.role ? eq(users.role, filter.role) : undefined,
    filter.disabled !== undefined ? eq(users.disabled, filter.disabled) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    db.select().from(users).where(where).orderBy(asc(users.createdAt), asc(users.id)).limit(filter.limit).offset(filter.offset),
    db.select({ n: count() }).from(users).where(where),
  ]);
  const counts = await serverCountsOf(deps, db, rows.map((r) => r.id));
  return { users: rows.map((r) => toUserView(r, counts.get(r.id) ?? 0)), total: Number(total?.n ?? 0) };
}

/** A new account; an address set here is unverified until its holder types back a code. */
export async function createUser(
  deps: AdminDeps,
  actor: SessionContext,
  input: { username: string; email?: string; role: UserRole },
  requestId?: string,
) {
  assertMayManage(actor, { role: 'user' }, input.role);
  return insertUser(deps, actor.userId, input, requestId);
}

/**
 * A new account made by the operator at the host (`felis user create`, with the database's own
 * credentials, as recover-owner): any role, audited to `cli:<os user>`.
 */
export async function createUserAsOperator(deps: AdminDeps, operator: string, input: { username: string; email?: string; role: UserRole }) {
  return insertUser(deps, `cli:${operator}`, input);
}

async function insertUser(deps: AdminDeps, actor: string, input: { username: string; email?: string; role: UserRole }, requestId?: string) {
  const now = deps.clock.now();
  const row = await unlessTaken(
    deps.database.db.transaction(async (tx) => {
      const [created] = await tx
        .insert(users)
        .values({ username: input.username, email: input.email?.toLowerCase() ?? null, role: input.role, createdAt: now, updatedAt: now })
        .returning();
      await writeAudit(tx, { at: now, actor, action: 'user.create', target: created!.id, detail: { role: input.role }, requestId });
      return created!;
    }),
  );
  return userView(deps, deps.database.db, row);
}

/** One account, deleted ones included, with its game identities. */
export async function userDetail(deps: Pick<Deps & AccountsParts, 'database' | 'serverCounts'>, id: string) {
  const db = deps.database.db;
  const row = await findUserById(db, id);
  if (!row) throw new DomainError('not_found', 'No such user.');
  const counts = await serverCountsOf(deps, db, [row.id]);
  const links = await db
    .select({ mcUuid: linkedAccounts.mcUuid, authSource: linkedAccounts.authSource, verifiedAt: linkedAccounts.verifiedAt })
    .from(linkedAccounts)
    .where(eq(linkedAccounts.userId, row.id))
    .orderBy(asc(linkedAccounts.verifiedAt));
  return toUserDetail(row, counts.get(row.id) ?? 0, links);
}

/** Renames, re-addresses (a new address is unverified; null removes it) or changes the role of an account. */
export async function updateUser(
  deps: AdminDeps,
  actor: SessionContext,
  id: string,
  patch: { username?: string; email?: string | null; role?: UserRole },
  requestId?: string,
) {
  const now = deps.clock.now();
  const row = await unlessTaken(
    deps.database.db.transaction(async (tx) => {
      const target = await liveUserOr404(tx, id);
      assertMayManage(actor, target, patch.role);
      if (patch.role !== undefined && patch.role !== 'owner') await assertNotLastOwner(tx, target);
      const email = patch.email === undefined ? undefined : (patch.email?.toLowerCase() ?? null);
      const emailChanged = email !== undefined && email !== target.email?.toLowerCase();
      const [updated] = await tx
        .update(users)
        .set({
          ...(patch.username !== undefined ? { username: patch.username } : {}),
          ...(patch.role !== undefined ? { role: patch.role } : {}),
          // An address typed by staff is unverified until its holder types back a code.
          ...(emailChanged ? { email, emailVerified: false } : {}),
          updatedAt: now,
        })
        .where(eq(users.id, id))
        .returning();
      const changes = {
        ...(patch.username !== undefined && patch.username !== target.username ? { username: { from: target.username, to: patch.username } } : {}),
        ...(patch.role !== undefined && patch.role !== target.role ? { role: { from: target.role, to: patch.role } } : {}),
        ...(emailChanged ? { email: { from: target.email, to: email } } : {}),
      };
      if (Object.keys(changes).length > 0) {
        await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.update', target: id, detail: changes, requestId });
      }
      return updated!;
    }),
  );
  return userView(deps, deps.database.db, row);
}

/** Disables an account (every session is revoked) or enables it again. */
export async function setUserDisabled(deps: AdminDeps, actor: SessionContext, id: string, disabled: boolean, requestId?: string): Promise<void> {
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    const target = await liveUserOr404(tx, id);
    assertMayManage(actor, target);
    if (disabled) await assertNotLastOwner(tx, target);
    if (target.disabled === disabled) return;
    await tx.update(users).set({ disabled, updatedAt: now }).where(eq(users.id, id));
    const revoked = disabled ? await revokeUserSessions(tx, id, now) : 0;
    // A disabled account's keys stay dead when it is enabled again.
    const keys = disabled ? await revokeUserApiKeys(tx, id, now) : 0;
    await writeAudit(tx, {
      at: now,
      actor: actor.userId,
      action: disabled ? 'user.disable' : 'user.enable',
      target: id,
      detail: disabled ? { sessions_revoked: revoked, ...(keys > 0 ? { api_keys_revoked: keys } : {}) } : undefined,
      requestId,
    });
  });
}

/** Soft-deletes an account and revokes its sessions. */
export async function deleteUser(deps: AdminDeps, actor: SessionContext, id: string, requestId?: string): Promise<void> {
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    const target = await liveUserOr404(tx, id);
    assertMayManage(actor, target);
    await assertNotLastOwner(tx, target);
    await tx.update(users).set({ deletedAt: now, updatedAt: now }).where(eq(users.id, id));
    const revoked = await revokeUserSessions(tx, id, now);
    const keys = await revokeUserApiKeys(tx, id, now);
    await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.delete', target: id, detail: { sessions_revoked: revoked, ...(keys > 0 ? { api_keys_revoked: keys } : {}) }, requestId });
  });
}

/** A live user's quota (null: unlimited). */
export async function userQuota(deps: Pick<Deps, 'database'>, id: string): Promise<Quota> {
  await liveUserOr404(deps.database.db, id);
  return getQuota(deps.database.db, id);
}

type QuotaInput = { user_id?: string } & Partial<Record<'max_servers' | 'max_cpu_milli' | 'max_memory_mb' | 'max_storage_gb', number | null>>;

/** Replaces a user's quota; an absent or null limit is unlimited. */
export async function replaceQuota(deps: AdminDeps, actor: SessionContext, id: string, input: QuotaInput, requestId?: string): Promise<Quota> {
  if (input.user_id !== undefined && input.user_id !== id) throw new DomainError('bad_request', 'user_id differs from the path.');
  const limits = {
    maxServers: input.max_servers ?? null,
    maxCpuMilli: input.max_cpu_milli ?? null,
    maxMemoryMb: input.max_memory_mb ?? null,
    maxStorageGb: input.max_storage_gb ?? null,
  };
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    await liveUserOr404(tx, id);
    await tx.insert(userQuotas).values({ userId: id, ...limits }).onConflictDoUpdate({ target: userQuotas.userId, set: limits });
    await writeAudit(tx, { at: now, actor: actor.userId, action: 'user.quota', target: id, detail: { ...limits }, requestId });
  });
  return getQuota(deps.database.db, id);
}

/** A live user's live sessions, newest first. */
export async function userSessions(deps: Pick<Deps, 'database' | 'clock'>, id: string) {
  const target = await liveUserOr404(deps.database.db, id);
  const rows = await listLiveSessions(deps.database.db, target.id, isStaffRole(target.role), deps.clock.now());
  return rows.map((r) => toSessionView(r));
}

/**
 * A staff change to the ways into a live account, in one transaction with its audit row: 404 for
 * an unknown or deleted user, 403 unless the actor may manage them (anyone may act on themselves).
 */
async function changeUserAccess(
  deps: AdminDeps,
  actor: SessionContext,
  id: string,
  action: string,
  change: (tx: Transaction, now: Date) => Promise<Record<string, unknown>>,
  requestId?: string,
): Promise<void> {
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    const target = await liveUserOr404(tx, id);
    if (target.id !== actor.userId) assertMayManage(actor, target);
    const detail = await change(tx, now);
    await writeAudit(tx, { at: now, actor: actor.userId, action, target: id, detail, requestId });
  });
}

/** Signs a user out everywhere. */
export async function revokeAllUserSessions(deps: AdminDeps, actor: SessionContext, id: string, requestId?: string): Promise<void> {
  await changeUserAccess(
    deps,
    actor,
    id,
    'session.revoke_all',
    async (tx, now) => {
      const sessions = await revokeUserSessions(tx, id, now);
      const keys = await revokeUserApiKeys(tx, id, now);
      return { sessions_revoked: sessions, ...(keys > 0 ? { api_keys_revoked: keys } : {}) };
    },
    requestId,
  );
}

/** Removes every passkey of a user (a lost authenticator); their sessions stay. */
export async function removeUserPasskeys(deps: AdminDeps & Pick<Deps & AccountsParts, 'passkeys'>, actor: SessionContext, id: string, requestId?: string): Promise<void> {
  const { passkeys } = deps;
  await changeUserAccess(deps, actor, id, 'passkey.remove_all', async (tx) => ({ removed: passkeys ? await passkeys.removeAll(tx, id) : 0 }), requestId);
}

/** Revokes one of a user's sessions; 404 session_not_found for an unknown user or session. */
export async function revokeUserSession(deps: AdminDeps, actor: SessionContext, id: string, tokenHash: string, requestId?: string): Promise<void> {
  const now = deps.clock.now();
  const revoked = await deps.database.db.transaction(async (tx) => {
    const target = await findUserById(tx, id);
    if (!target) return false;
    if (target.id !== actor.userId) assertMayManage(actor, target);
    if (!(await revokeSession(tx, tokenHash, now, id))) return false;
    await writeAudit(tx, { at: now, actor: actor.userId, action: 'session.revoke', target: id, detail: { token_hash: tokenHash }, requestId });
    return true;
  });
  if (!revoked) throw new DomainError('session_not_found', 'No such live session of this user.');
}

/** Linking moves a way into the game's side of an account: the owner's decision alone. */
function requireOwner(actor: SessionContext): void {
  if (actor.role !== 'owner') throw new DomainError('forbidden', 'Only an owner links or unlinks game identities.');
}

/** Links a game identity to an account by hand; 409 conflict when it is linked to one already. */
export async function linkIdentity(
  deps: AdminDeps & Pick<Deps, 'config'>,
  actor: SessionContext,
  id: string,
  link: { mcUuid: string; authSource: string },
  requestId?: string,
): Promise<'primary' | 'thirdparty'> {
  requireOwner(actor);
  const authSource = await linkSourceKind(deps, link.authSource);
  const now = deps.clock.now();
  return unlessTaken(
    deps.database.db.transaction(async (tx) => {
      await liveUserOr404(tx, id);
      // Linked to this very account already: the original answers 200 and changes nothing.
      const [held] = await tx.select({ userId: linkedAccounts.userId, authSource: linkedAccounts.authSource }).from(linkedAccounts).where(eq(linkedAccounts.mcUuid, link.mcUuid));
      if (held?.userId === id) return held.authSource;
      await tx.insert(linkedAccounts).values({ mcUuid: link.mcUuid, userId: id, authSource, verifiedAt: now });
      await writeAudit(tx, { at: now, actor: actor.userId, action: 'link.add', target: id, detail: { mc_uuid: link.mcUuid, auth_source: authSource }, requestId });
      return authSource;
    }),
    () => new DomainError('conflict', 'This game identity is linked to an account already.'),
  );
}

/**
 * What kind of link an `auth_source` names: `primary` and the panel's default `mojang` (and the
 * primary's own tag) are the primary; `thirdparty` and any configured source tag are third-party.
 */
async function linkSourceKind(deps: Pick<Deps, 'database' | 'config'>, named: string): Promise<'primary' | 'thirdparty'> {
  const primary = primarySource(deps.config.sessionSources).name;
  if (named === 'primary' || named === 'mojang' || named === primary) return 'primary';
  if (named === 'thirdparty') return 'thirdparty';
  const view = await readAuthSources(deps.database.db, deps.config.sessionSources);
  const tags = new Set([...deps.config.sessionSources.map((s) => s.name), ...view.sources.map((s) => s.tag)]);
  if (tags.has(named)) return 'thirdparty';
  throw new DomainError('bad_request', `auth_source must be primary, thirdparty, mojang or a configured source tag, not ${named}.`);
}

/** Unlinks a game identity from an account by hand; 404 when it is not linked to it. */
export async function unlinkIdentity(deps: AdminDeps, actor: SessionContext, id: string, mcUuid: string, requestId?: string): Promise<void> {
  requireOwner(actor);
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    await liveUserOr404(tx, id);
    const removed = await tx
      .delete(linkedAccounts)
      .where(and(eq(linkedAccounts.mcUuid, mcUuid), eq(linkedAccounts.userId, id)))
      .returning({ mcUuid: linkedAccounts.mcUuid });
    if (removed.length === 0) throw new DomainError('not_found', 'This game identity is not linked to that account.');
    await writeAudit(tx, { at: now, actor: actor.userId, action: 'link.remove', target: id, detail: { mc_uuid: mcUuid }, requestId });
  });
}
