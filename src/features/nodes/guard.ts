import { and, desc, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { nodeTasks, serverMoves } from '../../db/schema/nodes.js';
import { DomainError } from '../../lib/errors.js';
import type { NodeGuard } from '../servers/index.js';

/**
 * What the nodes feature tells the servers feature (below it, so handed over by the composition
 * root as `ServersParts.nodeGuard`): whether a node's maintenance or a move holds a server down.
 * Read from the task and move rows, so every replica agrees.
 */

/**
 * Whether the node's last task (other than an approval) leaves it out of service: it is running,
 * or took the node out of service. A failed cordon or drain counts too (the node may be cordoned):
 * fail closed until a `return` succeeds. `rows` newest first.
 */
export function outOfService(rows: readonly { node: string; action: string; state: string }[], node: string): boolean {
  const decisive = rows.find((r) => r.node === node && r.action !== 'approve');
  return decisive !== undefined && !(decisive.action === 'return' && decisive.state === 'succeeded');
}

export const nodeGuard: NodeGuard = {
  /** 409 node_operation_busy for a server pinned to a node under maintenance, as the original's guard. */
  async refuseOnNodeInMaintenance(db, server) {
    const node = server.resource.spec.node;
    if (node === undefined) return;
    const rows = await db
      .select({ node: nodeTasks.node, action: nodeTasks.action, state: nodeTasks.state })
      .from(nodeTasks)
      .where(eq(nodeTasks.node, node))
      .orderBy(desc(nodeTasks.startedAt))
      .limit(10);
    if (outOfService(rows, node)) throw new DomainError('node_operation_busy', `${server.resource.spec.name}'s node ${node} is under maintenance.`);
  },

  /**
   * Whether a move of the server is still running (moves.ts): a move whose runner died keeps the
   * server from starting elsewhere until it is marked failed, whether or not its world lock was swept.
   */
  async moveRunning(db: Queryable, serverName: string) {
    const [moving] = await db
      .select({ id: serverMoves.id })
      .from(serverMoves)
      .where(and(eq(serverMoves.server, serverName), eq(serverMoves.state, 'running')))
      .limit(1);
    return moving !== undefined;
  },
};
