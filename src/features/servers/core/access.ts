import { and, eq } from 'drizzle-orm';
import type { ChangeFeed } from '../../../db/change-feed.js';
import type { Queryable } from '../../../db/client.js';
import { serverClaims, serverMembers } from '../../../db/schema/servers.js';
import type { Deps } from '../../../deps.js';
import type { SessionContext } from '../../../http/session.js';
import { DomainError } from '../../../lib/errors.js';
import { isStaffRole } from '../../accounts/index.js';

/**
 * THE access rule (issue 39's "one access rule", issue 42's members): who may act on a server.
 * Staff may do anything, the owner anything, a member what its permissions name; nobody else
 * anything. Every feature that acts on a server asks here, naming what the route needs.
 */

/** What a member may be given, one for each kind of route (docs: api-extensions, members). */
export const MEMBER_PERMISSIONS = [
  'console.read',
  'console.command',
  'power',
  'files.read',
  'files.write',
  'backups.read',
  'backups.write',
  'schedules',
  'access',
] as const;
export type MemberPermission = (typeof MEMBER_PERMISSIONS)[number];

/**
 * What a route needs: a member permission, `member` (any member: the server's status), or
 * `owner` (the owner and staff only: members, retirement, transfers).
 */
export type Need = MemberPermission | 'member' | 'owner';

export type Standing = 'staff' | 'owner' | 'member' | 'none';

export interface ServerAccess {
  standing: Standing;
  /** The server's owner (undefined: unclaimed). */
  owner: string | undefined;
  /** When the owner claimed it (undefined: unclaimed). */
  claimedAt: Date | undefined;
  /** A member's permissions (empty for everyone else). */
  permissions: readonly MemberPermission[];
}

/** Who asks, as the rule sees them. */
export type Asker = Pick<SessionContext, 'userId' | 'role'>;

/**
 * The rule's first half, without the members: whether the asker owns the server (`owner`, the
 * claim's user; undefined: unclaimed) and whether it is staff. `accessOf` stands on it; a caller
 * that already holds the owner asks it directly: the lobby menu over every server, and the proxy's
 * wake by a player in game (a join is judged by owner and staff alone; a member's permissions are
 * the panel's and the API's, docs/notes/issue-42-members-keys.md). `asker` undefined: nobody
 * (an unlinked or disabled player).
 */
export function ownerOrStaff(owner: string | undefined, asker: Asker | undefined): { owns: boolean; staff: boolean } {
  if (asker === undefined) return { owns: false, staff: false };
  return { owns: owner !== undefined && owner === asker.userId, staff: isStaffRole(asker.role) };
}

/** One query: the claim and the asker's membership under that owner. */
export async function accessOf(db: Queryable, name: string, asker: Asker): Promise<ServerAccess> {
  const [row] = await db
    .select({ owner: serverClaims.userId, claimedAt: serverClaims.claimedAt, permissions: serverMembers.permissions })
    .from(serverClaims)
    .leftJoin(
      serverMembers,
      and(eq(serverMembers.serverName, serverClaims.serverName), eq(serverMembers.ownerId, serverClaims.userId), eq(serverMembers.userId, asker.userId)),
    )
    .where(eq(serverClaims.serverName, name))
    .limit(1);
  const owner = row?.owner;
  const claimedAt = row?.claimedAt;
  const { owns, staff } = ownerOrStaff(owner, asker);
  if (staff) return { standing: 'staff', owner, claimedAt, permissions: [] };
  if (owns) return { standing: 'owner', owner, claimedAt, permissions: [] };
  if (row?.permissions) return { standing: 'member', owner, claimedAt, permissions: row.permissions as MemberPermission[] };
  return { standing: 'none', owner, claimedAt, permissions: [] };
}

/** Whether an access standing admits what a route needs. */
export function admits(access: ServerAccess, need: Need): boolean {
  if (access.standing === 'staff' || access.standing === 'owner') return true;
  if (access.standing !== 'member' || need === 'owner') return false;
  return need === 'member' || access.permissions.includes(need);
}

/** Whether the asker may do what `need` names on the server. */
export async function mayAct(deps: Pick<Deps, 'database'>, name: string, asker: Asker, need: Need): Promise<boolean> {
  return admits(await accessOf(deps.database.db, name, asker), need);
}

/**
 * 403 forbidden unless the asker may do what `need` names; the access otherwise (its owner, its
 * claim). `refusal` is the message a stranger gets (each route keeps its own words).
 */
export async function requireAccess(deps: Pick<Deps, 'database'>, name: string, asker: Asker, need: Need, refusal?: string): Promise<ServerAccess> {
  const access = await accessOf(deps.database.db, name, asker);
  if (!admits(access, need)) {
    const message =
      access.standing === 'member'
        ? need === 'owner'
          ? `Only ${name}'s owner or staff may do this.`
          : `This needs the ${need} permission on ${name}.`
        : (refusal ?? `Only ${name}'s owner or staff may do this.`);
    throw new DomainError('forbidden', message);
  }
  return access;
}

/**
 * Tells what watches a server's access (an open console stream) that it may have changed: a
 * member removed or its permissions changed. On this replica at once; on the others through the
 * database's change feed (the `server_members` trigger notifies the same channel as sessions),
 * listened to from the first watch until `close()` (the servers module's closing task).
 */
export class AccessChanges {
  readonly #watchers = new Map<string, Set<() => void>>();
  readonly #feed: ChangeFeed | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(feed?: ChangeFeed) {
    this.#feed = feed;
  }

  /** `onChange` runs when the server's access may have changed; returns the way to stop watching. */
  watch(name: string, onChange: () => void): () => void {
    if (!this.#closed) this.#unsubscribe ??= this.#feed?.subscribe(() => this.#runAll());
    let set = this.#watchers.get(name);
    if (!set) this.#watchers.set(name, (set = new Set()));
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (set.size === 0 && this.#watchers.get(name) === set) this.#watchers.delete(name);
    };
  }

  changed(name: string): void {
    for (const run of [...(this.#watchers.get(name) ?? [])]) run();
  }

  #runAll(): void {
    for (const name of [...this.#watchers.keys()]) this.changed(name);
  }

  close(): void {
    this.#closed = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }
}
