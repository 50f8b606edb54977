import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { serverRetirements } from '../../db/schema/servers.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { writeAudit } from '../audit/index.js';
import { requireAccess } from './core/index.js';
import { requireServer } from './core/index.js';
import type { RetiringView } from './core/index.js';
import type { ServersParts } from './core/index.js';

/**
 * Retirement of a server, asked for by its owner or staff: the server is stopped, then released or
 * deleted by the sweep (retirement-sweep.ts); until then the request can be called off.
 */

export type Retirement = typeof serverRetirements.$inferSelect;

type RetirementDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock'> & ServersParts;

async function retirementOf(db: Queryable, serverName: string): Promise<Retirement | undefined> {
  const [row] = await db.select().from(serverRetirements).where(eq(serverRetirements.serverName, serverName));
  return row;
}

/** A retirement as the API shows it. */
export function retiringView(row: Retirement): RetiringView {
  return { requested_at: row.requestedAt.toISOString(), delete: row.delete };
}

/** The pending retirement of a server, as the API shows it, if any. */
export async function retiringOf(db: Queryable, serverName: string): Promise<RetiringView | undefined> {
  const row = await retirementOf(db, serverName);
  return row && retiringView(row);
}

/** Every pending retirement by server, as the API shows it (status lists show it on each row). */
export async function retiringByServer(db: Queryable): Promise<Map<string, RetiringView>> {
  const rows = await db.select().from(serverRetirements);
  return new Map(rows.map((r) => [r.serverName, retiringView(r)]));
}

/** Whether the server's retirement is pending. */
export async function isRetiring(db: Queryable, serverName: string): Promise<boolean> {
  return (await retirementOf(db, serverName)) !== undefined;
}

/** The names of the servers being retired. */
export async function retiringServers(db: Queryable): Promise<Set<string>> {
  const rows = await db.select({ serverName: serverRetirements.serverName }).from(serverRetirements);
  return new Set(rows.map((r) => r.serverName));
}

/** A retiring server is never started again (409 server_retiring, the original's code). */
export async function refuseRetiring(db: Queryable, serverName: string): Promise<void> {
  if (await isRetiring(db, serverName)) throw new DomainError('server_retiring', `${serverName} is being retired.`);
}

/** Asks for a retirement (again: `delete` is updated, the first request's time stays). */
export async function requestRetirement(
  deps: RetirementDeps,
  name: string,
  session: SessionContext,
  remove: boolean,
  requestId: string | undefined,
  confirm: string,
): Promise<Retirement> {
  await requireServer(deps, name);
  const access = await requireAccess(deps, name, session, 'owner', `Only ${name}'s owner may retire it.`);
  // The owner gives a server up; deleting it is staff's call (the original's rule).
  if (remove && access.standing !== 'staff') throw new DomainError('forbidden', 'Only staff can delete a server.');
  // The request repeats the server's name, as the original's panel asks the person to type it.
  if (confirm !== name) throw new DomainError('confirm_mismatch', `Type the server's name, ${name}, to confirm.`);
  const now = deps.clock.now();
  const db = deps.database.db;
  await db.transaction(async (tx) => {
    await tx
      .insert(serverRetirements)
      .values({ serverName: name, requestedAt: now, requestedBy: session.userId, delete: remove })
      .onConflictDoUpdate({ target: serverRetirements.serverName, set: { delete: remove } });
    await writeAudit(tx, { at: now, actor: session, action: 'server.retire', target: name, detail: { delete: remove }, requestId: requestId ?? null });
  });
  return (await retirementOf(db, name))!;
}

/** Calls off a retirement the sweep has not carried out yet; nothing when there is none. */
export async function cancelRetirement(deps: RetirementDeps, name: string, session: SessionContext, requestId: string | undefined): Promise<void> {
  await requireServer(deps, name);
  const access = await requireAccess(deps, name, session, 'owner', `Only ${name}'s owner may call off its retirement.`);
  // A deletion staff asked for is staff's to call off (the original's rule).
  const pending = await retirementOf(deps.database.db, name);
  if (pending?.delete && access.standing !== 'staff') throw new DomainError('forbidden', 'Only staff can call off the deletion of a server.');
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    const removed = await tx.delete(serverRetirements).where(eq(serverRetirements.serverName, name)).returning({ n: serverRetirements.serverName });
    if (removed.length > 0) {
      await writeAudit(tx, { at: now, actor: session, action: 'server.retire_cancel', target: name, detail: null, requestId: requestId ?? null });
    }
  });
}
