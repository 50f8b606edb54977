import { count, eq, inArray, sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { serverActivity, serverClaims } from '../../../db/schema/servers.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { findUserByMcUuid, getQuota, hasLink, lockUser } from '../../accounts/index.js';
import type { CachedServer } from '../core/index.js';
import { requireServer } from '../core/index.js';
import { cpuMilli, memoryMb, storageGb } from '../../../adapters/cluster/quantity.js';
import type { ServersParts } from '../core/index.js';

/** When a server's world was last in use: the later of its last start and last join, else its claim. */
export async function lastInUse(db: Queryable, serverName: string): Promise<Date | undefined> {
  const [activity] = await db.select().from(serverActivity).where(eq(serverActivity.serverName, serverName));
  const times = [activity?.readyAt, activity?.lastJoinAt].filter((t): t is Date => t instanceof Date);
  if (times.length > 0) return new Date(Math.max(...times.map((t) => t.getTime())));
  const [claim] = await db.select({ at: serverClaims.claimedAt }).from(serverClaims).where(eq(serverClaims.serverName, serverName));
  return claim?.at;
}

/** Claim without a linked game identity: 412 `not_linked`, the original's code (api-extensions). */
const notLinked = () =>
  new DomainError('claim_not_linked', 'Link your Minecraft account to a web account to claim a server.');

export async function ownerOf(db: Queryable, serverName: string): Promise<string | undefined> {
  const [row] = await db.select({ userId: serverClaims.userId }).from(serverClaims).where(eq(serverClaims.serverName, serverName));
  return row?.userId;
}

/** server name → owner id, for the given names (all claims when omitted). */
export async function ownersOf(db: Queryable, serverNames?: string[]): Promise<Map<string, string>> {
  if (serverNames?.length === 0) return new Map();
  const query = db.select({ serverName: serverClaims.serverName, userId: serverClaims.userId }).from(serverClaims);
  const rows = serverNames ? await query.where(inArray(serverClaims.serverName, serverNames)) : await query;
  return new Map(rows.map((r) => [r.serverName, r.userId]));
}

/**
 * Hands every server one account claimed to another (an account migration's redeem), in the
 * caller's transaction; returns the names moved.
 */
export async function transferClaims(tx: Queryable, fromUserId: string, toUserId: string): Promise<string[]> {
  const moved = await tx.update(serverClaims).set({ userId: toUserId }).where(eq(serverClaims.userId, fromUserId)).returning({ name: serverClaims.serverName });
  return moved.map((r) => r.name);
}

/** server name → subdomain of the servers a user claimed. */
export async function serversOwnedBy(db: Queryable, userId: string): Promise<Map<string, string>> {
  const rows = await db
    .select({ serverName: serverClaims.serverName, subdomain: serverClaims.subdomain })
    .from(serverClaims)
    .where(eq(serverClaims.userId, userId));
  return new Map(rows.map((r) => [r.serverName, r.subdomain]));
}

/** user id → number of servers claimed, for the given users (the admin user list's server_count). */
export async function countServersByOwner(db: Queryable, userIds: string[]): Promise<Map<string, number>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .select({ userId: serverClaims.userId, n: count() })
    .from(serverClaims)
    .where(inArray(serverClaims.userId, userIds))
    .groupBy(serverClaims.userId);
  return new Map(rows.map((r) => [r.userId, Number(r.n)]));
}

/** The resources a claim counts against the owner's quota, from the server's spec. */
function claimCost(server: CachedServer) {
  const { spec } = server.resource;
  return {
    cpuMilli: (spec.cpu && cpuMilli(spec.cpu)) || 0,
    memoryMb: (spec.memory && memoryMb(spec.memory)) || 0,
    storageGb: (spec.storage && storageGb(spec.storage)) || 0,
  };
}

/**
 * Claims a server for a user in one transaction. The user's row is locked first, so that one user's
 * concurrent claims of different servers are counted one after another against the quota; the
 * primary key of server_claims decides a race for the same server (exactly one insert wins).
 */
async function claimServer(deps: Pick<Deps, 'database' | 'clock'>, server: CachedServer, userId: string): Promise<void> {
  const name = server.resource.spec.name;
  const cost = claimCost(server);
  await deps.database.db.transaction(async (tx) => {
    if (!(await lockUser(tx, userId))) throw new DomainError('forbidden', 'The account no longer exists.');
    if (await ownerOf(tx, name)) throw new DomainError('already_claimed', `${name} is already claimed.`);
    const quota = await getQuota(tx, userId);
    const [used] = await tx
      .select({
        servers: count(),
        cpu: sql<number>`coalesce(sum(${serverClaims.cpuMilli}), 0)::int`,
        memory: sql<number>`coalesce(sum(${serverClaims.memoryMb}), 0)::int`,
        storage: sql<number>`coalesce(sum(${serverClaims.storageGb}), 0)::int`,
      })
      .from(serverClaims)
      .where(eq(serverClaims.userId, userId));
    const over = (limit: number | null, usedNow: number, adding: number) => limit !== null && usedNow + adding > limit;
    if (over(quota.max_servers, used!.servers, 1)) throw new DomainError('quota_exceeded', 'Your server quota is used up.');
    if (over(quota.max_cpu_milli, Number(used!.cpu), cost.cpuMilli)) throw new DomainError('quota_exceeded', 'Your CPU quota would be exceeded.');
    if (over(quota.max_memory_mb, Number(used!.memory), cost.memoryMb)) throw new DomainError('quota_exceeded', 'Your memory quota would be exceeded.');
    if (over(quota.max_storage_gb, Number(used!.storage), cost.storageGb)) throw new DomainError('quota_exceeded', 'Your storage quota would be exceeded.');
    const inserted = await tx
      .insert(serverClaims)
      .values({ serverName: name, subdomain: server.resource.spec.subdomain, userId, claimedAt: deps.clock.now(), ...cost })
      .onConflictDoNothing()
      .returning({ serverName: serverClaims.serverName });
    if (inserted.length === 0) throw new DomainError('already_claimed', `${name} is already claimed.`);
  });
}

type ClaimDeps = Pick<Deps, 'database' | 'clock' | 'cluster' | 'config'> & ServersParts;

/** The panel's claim: the signed-in user, who must have linked a game identity. */
export async function claimForUser(deps: ClaimDeps, name: string, userId: string): Promise<void> {
  const server = await requireServer(deps, name);
  if (!(await hasLink(deps.database.db, userId))) throw notLinked();
  await claimServer(deps, server, userId);
}

/** The proxy's claim for a player in game: for the web account their identity is linked to. */
export async function claimForPlayer(deps: ClaimDeps, name: string, mcUuid: string): Promise<void> {
  const server = await requireServer(deps, name);
  const player = await findUserByMcUuid(deps.database.db, mcUuid);
  if (!player) throw notLinked();
  if (player.disabled) throw new DomainError('forbidden', 'This account is disabled.');
  await claimServer(deps, server, player.id);
}
