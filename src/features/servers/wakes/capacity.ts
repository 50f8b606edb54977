import { lockForTransaction } from '../../../coordination/index.js';
import { and, asc, eq, gt, inArray, isNull, lt, ne } from 'drizzle-orm';
import type { ServerResource } from '../../../adapters/cluster/types.js';
import type { Queryable } from '../../../db/client.js';
import { writeAudit, type AuditActor } from '../../audit/index.js';
import { serverClaims, serverGuestWakes, serverWakes } from '../../../db/schema/servers.js';
import { isStaffRole, roleOf } from '../../accounts/index.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { type CachedServer } from '../core/index.js';
import { clusterCall } from '../core/index.js';
import { integerSetting, SERVER_SETTINGS, wakePolicyInForce } from './settings.js';
import { takeWakeSlot } from './wake-slot.js';
import { explicitStopSince, stopWords } from './stops.js';
import type { ServersParts } from '../core/index.js';

/** Serialises every start that needs a node slot, on every replica that shares the database. */
/** A guest start this recent holds its slot even if the cache has not seen it yet. */
const FRESH_START_MS = 60_000;

export function holdsSlot(resource: ServerResource): boolean {
  return resource.spec.desiredState === 'Running' || resource.status.phase !== 'Stopped';
}

/** Who asks for a start: `waker` is a user id, or `mc:<uuid>` for an unlinked player. */
export interface Waker {
  waker: string;
  /** The server's owner or staff: never refused for slots held by guests of unclaimed servers. */
  privileged: boolean;
  /** The waker owns this server. */
  owns: boolean;
  /**
   * A start on someone's behalf (a scheduled run, a restart) asked for at this time: refused with
   * 409 `conflict` when its owner or staff stopped the server explicitly since (servers/stops.ts).
   */
  unlessStoppedSince?: Date;
}

type StartDeps = Pick<Deps, 'database' | 'cluster' | 'clock' | 'config'> & ServersParts;

/** Names of the servers that hold a slot now, as this replica's cache sees them. */
function slotHolders(deps: ServersParts): Set<string> {
  const names = new Set<string>();
  for (const server of deps.serverCache.all()) if (holdsSlot(server.resource)) names.add(server.resource.spec.name);
  return names;
}

/** The running servers `waker` started without owning them. */
async function guestStartsOf(tx: Queryable, deps: StartDeps, waker: string, now: Date): Promise<number> {
  const rows = await tx
    .select({ serverName: serverGuestWakes.serverName, wokenAt: serverGuestWakes.wokenAt, owner: serverClaims.userId })
    .from(serverGuestWakes)
    .leftJoin(serverClaims, eq(serverClaims.serverName, serverGuestWakes.serverName))
    .where(eq(serverGuestWakes.waker, waker));
  const holders = slotHolders(deps);
  return rows.filter(
    (r) => r.owner !== waker && (holders.has(r.serverName) || r.wokenAt.getTime() > now.getTime() - FRESH_START_MS),
  ).length;
}

/**
 * The oldest running server a guest started that is still unclaimed, if any, and started more than
 * FRESH_START_MS ago: a start just answered 202 is never taken back by the next wake.
 */
async function oldestGuestOfUnclaimed(tx: Queryable, deps: StartDeps, now: Date): Promise<string | undefined> {
  const holders = [...slotHolders(deps)];
  if (holders.length === 0) return undefined;
  const [row] = await tx
    .select({ serverName: serverGuestWakes.serverName })
    .from(serverGuestWakes)
    .leftJoin(serverClaims, eq(serverClaims.serverName, serverGuestWakes.serverName))
    .where(and(inArray(serverGuestWakes.serverName, holders), isNull(serverClaims.serverName), lt(serverGuestWakes.wokenAt, new Date(now.getTime() - FRESH_START_MS))))
    .orderBy(asc(serverGuestWakes.wokenAt))
    .limit(1);
  return row?.serverName;
}

/**
 * The servers that hold a slot on `node` besides `name`: those this replica's cache places there
 * (pinned, or running there) and holding a slot, and those pinned there whose start is too recent
 * for the cache to show (the wake rows every replica writes under the capacity lock): what was
 * just asked to run counts.
 */
async function holdersOnNode(tx: Queryable, deps: StartDeps, node: string, name: string, now: Date): Promise<number> {
  const placed = [...deps.serverCache.all()].filter(
    (s) => !s.system && s.resource.spec.name !== name && (s.resource.spec.node === node || s.resource.status.node === node),
  );
  const holding = new Set(placed.filter((s) => holdsSlot(s.resource)).map((s) => s.resource.spec.name));
  const others = placed.map((s) => s.resource.spec.name).filter((n) => !holding.has(n));
  if (others.length > 0) {
    const fresh = await tx
      .select({ serverName: serverWakes.serverName })
      .from(serverWakes)
      .where(and(inArray(serverWakes.serverName, others), gt(serverWakes.lastWakeAt, new Date(now.getTime() - FRESH_START_MS))));
    for (const row of fresh) holding.add(row.serverName);
  }
  return holding.size;
}

/**
 * The owner's share of the running slots: the servers of one account (staff's excepted: theirs are
 * the platform's) may hold at most `running_share_percent` of `slots`, at least one, so one
 * player who claims and wakes server after server leaves the rest of the node to the others. Counted
 * like the guest share: the owner's servers that hold a slot in this replica's cache, or whose start
 * is too recent for the cache to have seen (the wake rows every replica writes).
 */
async function refuseOverRunningShare(tx: Queryable, deps: StartDeps, name: string, slots: number, now: Date): Promise<void> {
  const [owner] = await tx
    .select({ id: serverClaims.userId, role: roleOf(serverClaims.userId) })
    .from(serverClaims)
    .where(eq(serverClaims.serverName, name));
  if (!owner || isStaffRole(owner.role)) return;
  const percent = Math.min(100, await integerSetting(tx, SERVER_SETTINGS.runningSharePercent));
  const share = Math.max(1, Math.floor((slots * percent) / 100));
  if (share >= slots) return;
  const rows = await tx
    .select({ serverName: serverClaims.serverName, wokenAt: serverWakes.lastWakeAt })
    .from(serverClaims)
    .leftJoin(serverWakes, eq(serverWakes.serverName, serverClaims.serverName))
    .where(and(eq(serverClaims.userId, owner.id), ne(serverClaims.serverName, name)));
  const holders = slotHolders(deps);
  const running = rows.filter((r) => holders.has(r.serverName) || (r.wokenAt !== null && r.wokenAt.getTime() > now.getTime() - FRESH_START_MS)).length;
  if (running >= share) {
    throw new DomainError(
      'wake_share_exceeded',
      `This account's servers already hold ${running} of the node's running slots, its share of ${slots}; stop one of them first.`,
    );
  }
}

/**
 * A refusal of a start that may clear by itself (a slot frees, the cooldown passes, the world's
 * hold ends, the cluster answers again): a restart or a scheduled run waits it out instead of failing.
 */
export const startMayClear = (err: unknown): boolean =>
  err instanceof DomainError && (err.code === 'at_capacity' || err.code === 'cooldown' || err.code === 'maintenance_in_progress' || err.code === 'unavailable');

/**
 * Starts a server within the node's capacity. A server that already holds a slot is only marked
 * Running. Otherwise, under one advisory lock (so that concurrent wakes on any replica are counted
 * one after another against the cluster's own count): the player's fair share, the owner's running share, the cap, the wake
 * cooldown, then the start itself. At the cap, the owner (or staff) stops the oldest guest-started
 * unclaimed server to make room; anyone else gets 503 at_capacity.
 */
export async function startWithinCapacity(deps: StartDeps, server: CachedServer, who: Waker, actor: AuditActor): Promise<ServerResource> {
  const name = server.resource.spec.name;
  const db = deps.database.db;
  // Already wanted running: no new slot. A server still stopping is not: its start is counted below.
  if (server.resource.spec.desiredState === 'Running' && !who.unlessStoppedSince) {
    await takeWakeSlot(db, deps.clock.now(), name);
    return clusterCall(name, () => deps.cluster.setDesiredState(name, 'Running'));
  }
  return db.transaction(async (tx) => {
    await lockForTransaction(tx, 'capacity');
    const now = deps.clock.now();
    if (who.unlessStoppedSince) {
      const stop = await explicitStopSince(tx, name, who.unlessStoppedSince);
      if (stop) throw new DomainError('conflict', `${name} was stopped by ${stopWords(stop)} since; it is not started again.`);
      if (server.resource.spec.desiredState === 'Running') {
        await takeWakeSlot(tx, now, name);
        return clusterCall(name, () => deps.cluster.setDesiredState(name, 'Running'));
      }
    }
    if (!who.privileged && !who.owns) {
      const share = await integerSetting(tx, SERVER_SETTINGS.wakeSharePerPlayer);
      if ((await guestStartsOf(tx, deps, who.waker, now)) >= share) {
        throw new DomainError('wake_share_exceeded', `You already keep ${share} server(s) running that you do not own; stop one first.`);
      }
    }
    const cap = (await wakePolicyInForce(tx)).maxRunningServers;
    const capacity = await clusterCall(name, () => deps.cluster.capacity());
    // The cluster counts this server too while it is still stopping; its own slot is the one asked for.
    const running = capacity.running - (holdsSlot(server.resource) ? 1 : 0);
    const node = server.resource.spec.node;
    if (cap > 0) await refuseOverRunningShare(tx, deps, name, cap * capacity.nodes, now);
    if (cap > 0 && node !== undefined && (await holdersOnNode(tx, deps, node, name, now)) >= cap) {
      throw new DomainError('at_capacity', `Node ${node}, where ${name}'s world lives, runs as many servers as it may; try again later.`);
    }
    if (cap > 0 && running >= cap * capacity.nodes) {
      const victim = who.privileged ? await oldestGuestOfUnclaimed(tx, deps, now) : undefined;
      if (!victim) throw new DomainError('at_capacity', 'Every node runs as many servers as it may; try again later.');
      await clusterCall(victim, () => deps.cluster.setDesiredState(victim, 'Stopped'));
      await tx.delete(serverGuestWakes).where(eq(serverGuestWakes.serverName, victim));
      await writeAudit(tx, { at: now, actor, action: 'capacity.preempt', target: victim, detail: { for: name }, requestId: null });
    }
    await takeWakeSlot(tx, now, name);
    const started = await clusterCall(name, () => deps.cluster.setDesiredState(name, 'Running'));
    if (who.owns) {
      await tx.delete(serverGuestWakes).where(eq(serverGuestWakes.serverName, name));
    } else {
      await tx
        .insert(serverGuestWakes)
        .values({ serverName: name, waker: who.waker, wokenAt: now })
        .onConflictDoUpdate({ target: serverGuestWakes.serverName, set: { waker: who.waker, wokenAt: now } });
    }
    return started;
  });
}
