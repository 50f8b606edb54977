import { and, asc, eq } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { serverWakeAllowlist } from '../../../db/schema/servers.js';
import type { Deps } from '../../../deps.js';
import type { SessionContext } from '../../../http/session.js';
import { linkedTo } from '../../accounts/index.js';
import { requireServer } from '../core/index.js';
import { requireAccess } from '../core/index.js';
import type { ServersParts } from '../core/index.js';

/**
 * A server's wake allowlist: the players who may wake it under the `allowlist` autostart policy.
 * A player lands on it by joining the server once (the original's RecordJoin); its owner or staff
 * take a player's wake right away or give it back, and the row stays either way.
 */

type AllowlistDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock'> & ServersParts;

export interface AllowlistEntry {
  mcUuid: string;
  addedAt: Date;
  canWake: boolean;
}

/** The list, oldest entry first. */
export async function wakeAllowlist(deps: AllowlistDeps, name: string, session: SessionContext): Promise<AllowlistEntry[]> {
  await requireServer(deps, name);
  await requireAccess(deps, name, session, 'access', `Only ${name}'s owner may read its allowlist.`);
  return deps.database.db
    .select({ mcUuid: serverWakeAllowlist.mcUuid, addedAt: serverWakeAllowlist.addedAt, canWake: serverWakeAllowlist.canWake })
    .from(serverWakeAllowlist)
    .where(eq(serverWakeAllowlist.serverName, name))
    .orderBy(asc(serverWakeAllowlist.addedAt), asc(serverWakeAllowlist.mcUuid));
}

/** Lets a player wake the server, or takes it back. */
export async function setWakeAllowed(deps: AllowlistDeps, name: string, session: SessionContext, mcUuid: string, canWake: boolean): Promise<void> {
  await requireServer(deps, name);
  await requireAccess(deps, name, session, 'access', `Only ${name}'s owner may change its allowlist.`);
  await deps.database.db
    .insert(serverWakeAllowlist)
    .values({ serverName: name, mcUuid, addedAt: deps.clock.now(), canWake })
    .onConflictDoUpdate({ target: [serverWakeAllowlist.serverName, serverWakeAllowlist.mcUuid], set: { canWake } });
}

/** A join puts the player on the list; a player whose wake right was taken away stays without it. */
export async function addJoinedPlayer(db: Queryable, serverName: string, mcUuid: string, now: Date): Promise<void> {
  await db.insert(serverWakeAllowlist).values({ serverName, mcUuid, addedAt: now, canWake: true }).onConflictDoNothing();
}

export async function onWakeAllowlist(db: Queryable, serverName: string, mcUuid: string): Promise<boolean> {
  const [row] = await db
    .select({ mcUuid: serverWakeAllowlist.mcUuid })
    .from(serverWakeAllowlist)
    .where(and(eq(serverWakeAllowlist.serverName, serverName), eq(serverWakeAllowlist.mcUuid, mcUuid), eq(serverWakeAllowlist.canWake, true)));
  return row !== undefined;
}

/** Whether one of the user's linked game identities is on the server's allowlist. */
export async function linkedIdentityOnWakeAllowlist(db: Queryable, serverName: string, userId: string): Promise<boolean> {
  const rows = await db
    .select({ mcUuid: serverWakeAllowlist.mcUuid })
    .from(serverWakeAllowlist)
    .where(and(eq(serverWakeAllowlist.serverName, serverName), eq(serverWakeAllowlist.canWake, true), linkedTo(serverWakeAllowlist.mcUuid, userId)))
    .limit(1);
  return rows.length > 0;
}

/** The servers whose allowlist names the player. */
export async function allowlistedServers(db: Queryable, mcUuid: string): Promise<Set<string>> {
  const rows = await db
    .select({ serverName: serverWakeAllowlist.serverName })
    .from(serverWakeAllowlist)
    .where(and(eq(serverWakeAllowlist.mcUuid, mcUuid), eq(serverWakeAllowlist.canWake, true)));
  return new Set(rows.map((r) => r.serverName));
}
