import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { writeAudit } from '../audit/index.js';
import { serverClaims, serverGuestWakes, serverRetirements, serverWakeAllowlist, serverWakes } from '../../db/schema/servers.js';

/**
 * Removes what the servers feature holds of one server: its claim (so a server made again under
 * the name has no owner), its wake allowlist, its wake and guest-wake records and a pending
 * retirement (the proxy's activity stays: the world volume outlives the server, and idle reclaim
 * reads it). Used where a server is gone for good: the retirement sweep
 * (in its transaction) and a server deleted in the cluster itself (`kubectl delete`, the
 * controller's finalizer, `forgetDeletedServer`). Answers how many rows went.
 */
export async function forgetServerRows(db: Queryable, name: string): Promise<number> {
  let removed = 0;
  for (const table of [serverClaims, serverWakeAllowlist, serverGuestWakes, serverWakes, serverRetirements]) {
    removed += (await db.delete(table).where(eq(table.serverName, name)).returning({ name: table.serverName })).length;
  }
  return removed;
}

/**
 * A server deleted in the cluster (`kubectl delete`): its rows go, and the audit log says so when
 * there were any (a retirement with `delete` removed them already, in its own transaction).
 */
export async function forgetDeletedServer(deps: { database: { db: Queryable }; clock: { now(): Date } }, name: string): Promise<void> {
  await deps.database.db.transaction(async (tx) => {
    const removed = await forgetServerRows(tx, name);
    if (removed > 0) await writeAudit(tx, { at: deps.clock.now(), actor: 'system', action: 'server.deleted_in_cluster', target: name, detail: { rows: removed }, requestId: null });
  });
}
