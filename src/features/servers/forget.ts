import { eq } from 'drizzle-orm';
import type { Queryable, Transaction } from '../../db/client.js';
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
 * What a feature above servers holds of a server and removes when the server is forgotten (the
 * schedules feature's `forgetServerSchedules`), in the forgetting's transaction; answers how many
 * rows went. Handed by the composition root: servers may not import the features above it.
 */
export type ServerRowsElsewhere = (tx: Transaction, name: string) => Promise<number>;

/**
 * A server deleted in the cluster (`kubectl delete`): its rows go, with what the features above
 * servers hold of it (`elsewhere`), in one transaction, and the audit log says so when there were
 * any (a retirement with `delete` removed the servers feature's rows already, in its own transaction).
 */
export async function forgetDeletedServer(
  deps: { database: { db: Queryable }; clock: { now(): Date } },
  name: string,
  elsewhere: readonly ServerRowsElsewhere[],
): Promise<void> {
  await deps.database.db.transaction(async (tx) => {
    let removed = await forgetServerRows(tx, name);
    for (const forget of elsewhere) removed += await forget(tx, name);
    if (removed > 0) await writeAudit(tx, { at: deps.clock.now(), actor: 'system', action: 'server.deleted_in_cluster', target: name, detail: { rows: removed }, requestId: null });
  });
}
