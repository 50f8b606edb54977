import { and, desc, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { nodeTasks, serverMoves } from '../../db/schema/nodes.js';
import { DomainError } from '../../lib/errors.js';
import type { CachedServer } from './core/index.js';

/**
 * 409 node_operation_busy for a server pinned to a node under maintenance, as the original's
 * guard: the node's last task (other than an approval) is running, or took the node out of
 * service. A failed cordon or drain counts too (the node may be cordoned): fail closed until a
 * `return` succeeds. Read from the task rows, so every replica agrees.
 */
export async function refuseOnNodeInMaintenance(db: Queryable, server: CachedServer): Promise<void> {
  const node = server.resource.spec.node;
  if (node === undefined) return;
  const rows = await db
    .select({ action: nodeTasks.action, state: nodeTasks.state })
    .from(nodeTasks)
    .where(eq(nodeTasks.node, node))
    .orderBy(desc(nodeTasks.startedAt))
    .limit(10);
  const decisive = rows.find((r) => r.action !== 'approve');
  if (!decisive) return;
  const inService = decisive.action === 'return' && decisive.state === 'succeeded';
  const busy = !inService;
  if (busy) throw new DomainError('node_operation_busy', `${server.resource.spec.name}'s node ${node} is under maintenance.`);
}

/**
 * Whether a move of the server is still running (nodes' moves.ts): a move whose runner died keeps
 * the server from starting elsewhere until it is marked failed, whether or not its world lock was
 * swept. Read from the move rows, so every replica agrees.
 */
export async function moveRunning(db: Queryable, serverName: string): Promise<boolean> {
  const [moving] = await db
    .select({ id: serverMoves.id })
    .from(serverMoves)
    .where(and(eq(serverMoves.server, serverName), eq(serverMoves.state, 'running')))
    .limit(1);
  return moving !== undefined;
}
