import { and, asc, eq } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { serverClaims, serverMembers } from '../../../db/schema/servers.js';
import type { Deps } from '../../../deps.js';
import type { SessionContext } from '../../../http/session.js';
import { DomainError } from '../../../lib/errors.js';
import { findLiveUserByName, identitiesOf, requireReauth } from '../../accounts/index.js';
import { writeAudit } from '../../audit/index.js';
import { requireAccess, type MemberPermission } from '../core/index.js';
import type { ServersParts } from '../core/index.js';
import { ownerOf } from './claims.js';
import { requireServer } from '../core/index.js';

/**
 * A server's members (issue 42): who its owner shares it with, and what each may do. Only the
 * owner and staff manage them; a member may leave. What a member may do is decided by the access
 * rule (access.ts), which reads the same rows.
 */

export type MemberDeps = Pick<Deps, 'database' | 'clock' | 'cluster' | 'config'> & ServersParts;

export interface MemberRow {
  userId: string;
  username?: string;
  email?: string;
  permissions: MemberPermission[];
  addedAt: Date;
  addedBy: string;
}

export interface MemberCaller {
  session: SessionContext;
  requestId: string | undefined;
}

/** Each permission once, in the order of the list of permissions (stable for a client's diff). */
const tidy = (permissions: readonly MemberPermission[]) => [...new Set(permissions)].sort();

async function membersUnder(db: Queryable, name: string, owner: string, userId?: string): Promise<MemberRow[]> {
  const rows = await db
    .select()
    .from(serverMembers)
    .where(and(eq(serverMembers.serverName, name), eq(serverMembers.ownerId, owner), userId ? eq(serverMembers.userId, userId) : undefined))
    .orderBy(asc(serverMembers.addedAt), asc(serverMembers.userId));
  const names = await identitiesOf(db, rows.map((r) => r.userId));
  return rows.map((r) => {
    const who = names.get(r.userId);
    return {
      userId: r.userId,
      ...(who ? { username: who.username } : {}),
      ...(who?.email ? { email: who.email } : {}),
      permissions: r.permissions as MemberPermission[],
      addedAt: r.addedAt,
      addedBy: r.addedBy,
    };
  });
}

/** The server's owner, for the routes that manage members (owner or staff only). */
async function managedOwner(deps: MemberDeps, name: string, session: SessionContext): Promise<string> {
  await requireServer(deps, name);
  const { owner } = await requireAccess(deps, name, session, 'owner', `Only ${name}'s owner may manage its members.`);
  if (owner === undefined) throw new DomainError('conflict', `${name} has no owner to share it.`);
  return owner;
}

export async function listMembers(deps: MemberDeps, name: string, session: SessionContext): Promise<MemberRow[]> {
  const owner = await managedOwner(deps, name, session);
  return membersUnder(deps.database.db, name, owner);
}

/** Adds a member named by username or e-mail (needs a fresh proof): 404 user_not_found, 409 already_member, 400 the owner. */
export async function addMember(deps: MemberDeps, name: string, caller: MemberCaller, input: { user: string; permissions: MemberPermission[] }): Promise<MemberRow> {
  const owner = await managedOwner(deps, name, caller.session);
  await requireReauth(deps, caller.session);
  const { db } = deps.database;
  const user = await findLiveUserByName(db, input.user);
  if (!user) throw new DomainError('user_not_found', `No account is named ${input.user}.`);
  if (user.id === owner) throw new DomainError('bad_request', `The owner of ${name} cannot be its member.`);
  const now = deps.clock.now();
  const permissions = tidy(input.permissions);
  await db.transaction(async (tx) => {
    const [existing] = await tx
      .select({ ownerId: serverMembers.ownerId })
      .from(serverMembers)
      .where(and(eq(serverMembers.serverName, name), eq(serverMembers.userId, user.id)))
      .for('update');
    if (existing?.ownerId === owner) throw new DomainError('already_member', `${input.user} is already a member of ${name}.`);
    const values = { serverName: name, userId: user.id, ownerId: owner, permissions, addedAt: now, addedBy: caller.session.userId };
    if (existing) {
      // A row left by a former owner counts for nothing: this add replaces it.
      await tx.update(serverMembers).set(values).where(and(eq(serverMembers.serverName, name), eq(serverMembers.userId, user.id)));
    } else {
      const inserted = await tx.insert(serverMembers).values(values).onConflictDoNothing().returning({ userId: serverMembers.userId });
      // Two adds at once: the second finds the first's row.
      if (inserted.length === 0) throw new DomainError('already_member', `${input.user} is already a member of ${name}.`);
    }
    await writeAudit(tx, { at: now, actor: caller.session, action: 'server.member.add', target: name, detail: { user_id: user.id, permissions }, requestId: caller.requestId ?? null });
  });
  return theMember(db, name, owner, user.id);
}

export async function updateMember(deps: MemberDeps, name: string, caller: MemberCaller, userId: string, input: { permissions: MemberPermission[] }): Promise<MemberRow> {
  const owner = await managedOwner(deps, name, caller.session);
  const { db } = deps.database;
  const permissions = tidy(input.permissions);
  const now = deps.clock.now();
  await db.transaction(async (tx) => {
    const updated = await tx
      .update(serverMembers)
      .set({ permissions })
      .where(and(eq(serverMembers.serverName, name), eq(serverMembers.userId, userId), eq(serverMembers.ownerId, owner)))
      .returning({ userId: serverMembers.userId });
    if (updated.length === 0) throw new DomainError('not_found', `No such member of ${name}.`);
    await writeAudit(tx, { at: now, actor: caller.session, action: 'server.member.update', target: name, detail: { user_id: userId, permissions }, requestId: caller.requestId ?? null });
  });
  deps.accessChanges?.changed(name);
  return theMember(db, name, owner, userId);
}

/** Removes a member: the owner or staff remove anyone, a member removes itself (leaving). Refused at once after. */
export async function removeMember(deps: MemberDeps, name: string, caller: MemberCaller, userId: string): Promise<void> {
  await requireServer(deps, name);
  const { db } = deps.database;
  const leaving = userId === caller.session.userId;
  const owner = leaving ? await ownerOf(db, name) : await managedOwner(deps, name, caller.session);
  const now = deps.clock.now();
  await db.transaction(async (tx) => {
    const removed =
      owner === undefined
        ? []
        : await tx
            .delete(serverMembers)
            .where(and(eq(serverMembers.serverName, name), eq(serverMembers.userId, userId), eq(serverMembers.ownerId, owner)))
            .returning({ userId: serverMembers.userId });
    if (removed.length === 0) {
      // A stranger asking to "leave" learns no more than that it is not a member.
      throw leaving ? new DomainError('not_found', `You are not a member of ${name}.`) : new DomainError('not_found', `No such member of ${name}.`);
    }
    await writeAudit(tx, { at: now, actor: caller.session, action: leaving ? 'server.member.leave' : 'server.member.remove', target: name, detail: { user_id: userId }, requestId: caller.requestId ?? null });
  });
  deps.accessChanges?.changed(name);
}

/** One member as the list shows it, just written (404 if it went in the meantime). */
async function theMember(db: Queryable, name: string, owner: string, userId: string): Promise<MemberRow> {
  const [row] = await membersUnder(db, name, owner, userId);
  if (!row) throw new DomainError('not_found', `No such member of ${name}.`);
  return row;
}

/** The servers a user is a member of (under their current owners), with the permissions: for `/me/servers`. */
export async function membershipsOf(db: Queryable, userId: string): Promise<Map<string, { subdomain: string; permissions: MemberPermission[] }>> {
  const rows = await db
    .select({ serverName: serverMembers.serverName, subdomain: serverClaims.subdomain, permissions: serverMembers.permissions })
    .from(serverMembers)
    .innerJoin(serverClaims, and(eq(serverClaims.serverName, serverMembers.serverName), eq(serverClaims.userId, serverMembers.ownerId)))
    .where(eq(serverMembers.userId, userId));
  return new Map(rows.map((r) => [r.serverName, { subdomain: r.subdomain, permissions: r.permissions as MemberPermission[] }]));
}
