import { eq } from 'drizzle-orm';
import type { ServerResource } from '../../adapters/cluster/types.js';
import type { Queryable } from '../../db/client.js';
import { writeAudit } from '../audit/index.js';
import { serverActivity, serverMaintenance } from '../../db/schema/servers.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import type { SessionContext } from '../../http/session.js';
import { findUserByMcUuid } from '../accounts/index.js';
import { LEASE_KEYS, leaseOf } from '../../coordination/index.js';
import { accessOf, admits, ownerOrStaff, requireAccess } from './core/index.js';
import { addJoinedPlayer, linkedIdentityOnWakeAllowlist, onWakeAllowlist } from './allowlist/index.js';
import type { CachedServer } from './core/index.js';
import type { ServerInfo, RetiringView } from './core/index.js';
import { ownerOf } from './ownership/index.js';
import { clusterCall, requireServer } from './core/index.js';
import { startWithinCapacity, type Waker } from './wakes/index.js';
import { refuseRetiring, retiringOf } from './retirement.js';
import { takeWakeSlot } from './wakes/index.js';
import { recordExplicitStop } from './wakes/index.js';
import type { ServersParts } from './core/index.js';

/**
 * Whether the server is under maintenance: marked so, its world held by a job (its world lease), or
 * a move of it still running (nodes' moves.ts): a move whose runner died keeps the server from
 * starting elsewhere until it is marked failed, whether or not its world lock was swept.
 */
export async function inMaintenance(deps: Pick<Deps, 'database'> & Pick<ServersParts, 'nodeGuard'>, serverName: string): Promise<boolean> {
  const { db } = deps.database;
  const [row] = await db.select({ reason: serverMaintenance.reason }).from(serverMaintenance).where(eq(serverMaintenance.serverName, serverName));
  if (row !== undefined || (await leaseOf(db, LEASE_KEYS.world(serverName))) !== undefined) return true;
  return deps.nodeGuard.moveRunning(db, serverName);
}

/**
 * A player joining by domain as the access rule sees it (`ownerOrStaff`): its linked account, unless
 * disabled (an unlinked UUID is nobody), against the server's owner; and how the fair share counts
 * its wake. Two reads, together.
 */
async function playerAtJoin(db: Queryable, server: CachedServer, mcUuid: string): Promise<Waker> {
  const [owner, player] = await Promise.all([ownerOf(db, server.resource.spec.name), findUserByMcUuid(db, mcUuid)]);
  const linked = player && !player.disabled ? { userId: player.id, role: player.role } : undefined;
  const { owns, staff } = ownerOrStaff(owner, linked);
  return { waker: linked ? linked.userId : `mc:${mcUuid}`, owns, privileged: owns || staff };
}

/**
 * The autostart policy for a player joining by domain. `public`: anyone. `ownerOnly` (also when
 * unset): the owner and staff only, so an ownerless one admits staff alone (as the original: it is
 * claimed first, then woken by its new owner). `allowlist`: the owner, staff and the players on the
 * server's wake allowlist whose wake right was not taken away.
 */
async function playerMayWake(db: Queryable, server: CachedServer, mcUuid: string, player: Waker): Promise<boolean> {
  const policy = server.resource.spec.autostartPolicy ?? 'ownerOnly';
  if (policy === 'public' || player.privileged) return true;
  if (policy === 'ownerOnly') return false;
  return onWakeAllowlist(db, server.resource.spec.name, mcUuid);
}

async function refuseInMaintenance(deps: Pick<Deps, 'database'> & Pick<ServersParts, 'nodeGuard'>, server: CachedServer): Promise<void> {
  const name = server.resource.spec.name;
  await deps.nodeGuard.refuseOnNodeInMaintenance(deps.database.db, server);
  if (await inMaintenance(deps, name)) {
    throw new DomainError('maintenance_in_progress', `${name}'s world is held by a restore, backup or file write.`);
  }
}

type WakeDeps = Pick<Deps, 'database' | 'clock' | 'cluster' | 'config'> & ServersParts;

/** The proxy's wake on a join by domain (policy, cooldown, capacity); a given-up start stays down. */
export async function wakeForPlayer(deps: WakeDeps, name: string, mcUuid: string): Promise<ServerResource> {
  const server = await requireServer(deps, name);
  const { spec, status } = server.resource;
  // Ready and meant to run: nothing to wake, and joining it is open to every player the proxy
  // admits, so the answer comes before the policy and the cooldown (no slot spent, as the original).
  if (status.ready && spec.desiredState === 'Running') return server.resource;
  const player = await playerAtJoin(deps.database.db, server, mcUuid);
  if (!(await playerMayWake(deps.database.db, server, mcUuid, player))) {
    throw new DomainError('forbidden', `${spec.name}'s autostart policy does not let you wake it.`);
  }
  await refuseInMaintenance(deps, server);
  await refuseRetiring(deps.database.db, spec.name);
  // A join never resets the retry budget: only the owner's wake from the panel starts it over.
  if (status.phase === 'Failed' && status.startGaveUp) {
    throw new DomainError('start_failed', `${spec.name} failed to start and will not be retried automatically.`);
  }
  return startWithinCapacity(deps, server, player, player.waker);
}

/**
 * The panel's wake. The owner, staff and a member with `power` may always wake (and a Failed
 * start is retried with a fresh restart budget, audited as retry_start); anyone else follows the
 * server's policy through their linked identities. A member's wake counts against the owner's
 * fair share: it is the owner's server that runs.
 */
export async function wakeFromPanel(deps: WakeDeps, name: string, session: SessionContext, requestId: string | undefined): Promise<void> {
  const server = await requireServer(deps, name);
  const { spec, status } = server.resource;
  const access = await accessOf(deps.database.db, spec.name, session);
  const { owner } = access;
  const privileged = admits(access, 'power');
  if (!privileged && !(await userMayWake(deps, server, session.userId, owner))) {
    throw new DomainError('forbidden', `Only ${spec.name}'s owner may wake it.`);
  }
  await refuseInMaintenance(deps, server);
  await refuseRetiring(deps.database.db, spec.name);
  if (status.phase === 'Failed' && !privileged && status.startGaveUp) {
    throw new DomainError('start_failed', `${spec.name} failed to start; its owner can retry.`);
  }
  if (status.phase === 'Failed' && privileged) {
    await takeWakeSlot(deps.database.db, deps.clock.now(), spec.name);
    await clusterCall(spec.name, async () => {
      if (spec.desiredState !== 'Running') await deps.cluster.setDesiredState(spec.name, 'Running');
      await deps.cluster.recreatePod(spec.name);
    });
    await writeAudit(deps.database.db, {
      at: deps.clock.now(),
      actor: session,
      action: 'retry_start',
      target: spec.name,
      detail: { autoRestarts: status.autoRestarts, startGaveUp: status.startGaveUp, desiredState: spec.desiredState ?? null },
      requestId: requestId ?? null,
    });
    return;
  }
  const asMember = access.standing === 'member' && owner !== undefined;
  const owns = ownerOrStaff(owner, session).owns || asMember;
  await startWithinCapacity(deps, server, { waker: asMember ? owner : session.userId, owns, privileged }, session);
}

async function userMayWake(deps: Pick<Deps, 'database'>, server: CachedServer, userId: string, owner: string | undefined) {
  const policy = server.resource.spec.autostartPolicy ?? 'ownerOnly';
  if (policy === 'public') return true;
  if (policy === 'ownerOnly') return false;
  return linkedIdentityOnWakeAllowlist(deps.database.db, server.resource.spec.name, userId);
}

export async function stopFromPanel(deps: Pick<Deps, 'database' | 'cluster' | 'config' | 'clock'> & ServersParts, name: string, session: SessionContext): Promise<void> {
  await requireServer(deps, name);
  await requireAccess(deps, name, session, 'power', `Only ${name}'s owner may stop it.`);
  await recordExplicitStop(deps, name, session.userId, 'stop');
  await clusterCall(name, () => deps.cluster.setDesiredState(name, 'Stopped'));
}

/** A server's status for a signed-in user: its owner, staff, a member, or anyone while it is unclaimed. */
export async function statusForUser(deps: Pick<Deps, 'database' | 'cluster' | 'config'> & ServersParts, name: string, session: SessionContext): Promise<ServerInfo & { retiring?: RetiringView }> {
  const server = await requireServer(deps, name);
  const access = await accessOf(deps.database.db, name, session);
  if (access.owner !== undefined && !admits(access, 'member')) throw new DomainError('forbidden', 'This server belongs to someone else.');
  // Its owner and staff see a pending retirement; a member, or anyone looking at an unclaimed server, does not (the original).
  const retiring = admits(access, 'owner') ? await retiringOf(deps.database.db, name) : undefined;
  return retiring ? { ...server.info, retiring } : server.info;
}

/** The backend answered the proxy: the server is ready for players. */
export async function recordReady(deps: Pick<Deps, 'database' | 'clock' | 'cluster' | 'config'> & ServersParts, name: string): Promise<void> {
  await requireServer(deps, name);
  await clusterCall(name, () => deps.cluster.reportReady(name));
  const now = deps.clock.now();
  await deps.database.db
    .insert(serverActivity)
    .values({ serverName: name, readyAt: now })
    .onConflictDoUpdate({ target: serverActivity.serverName, set: { readyAt: now } });
}

/** A player joined: the idle timer starts over from now, and the player is on the wake allowlist. */
export async function recordJoin(deps: Pick<Deps, 'database' | 'clock' | 'cluster' | 'config'> & ServersParts, name: string, mcUuid: string): Promise<void> {
  await requireServer(deps, name);
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    await tx
      .insert(serverActivity)
      .values({ serverName: name, lastJoinAt: now, lastJoinUuid: mcUuid })
      .onConflictDoUpdate({ target: serverActivity.serverName, set: { lastJoinAt: now, lastJoinUuid: mcUuid } });
    await addJoinedPlayer(tx, name, mcUuid, now);
  });
}
