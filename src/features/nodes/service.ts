import { DependencyUnavailable } from '../../lib/unavailable.js';
import { desc, eq } from 'drizzle-orm';
import { ClusterForbiddenError, type ClusterNodes } from '../../adapters/cluster/nodes.js';
import { ClusterNotFoundError } from '../../adapters/cluster/types.js';
import { nodeTasks } from '../../db/schema/nodes.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { requireReauth, uniqueViolation } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { holdsSlot, syncedCache, wakePolicyInForce } from '../servers/index.js';
import type { NodeCache, NodesParts } from './cache.js';
import { outOfService } from './guard.js';
import { runNodeTask } from './runner.js';
import type { NodeTaskRequest, NodeTaskView } from './schema.js';
import type { ServersParts } from '../servers/index.js';

type NodeDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'log' | 'random' | 'replica' | 'rcon'> & ServersParts & NodesParts;

/** The last tasks shown, as the original's list (newest first). */
const LISTED_TASKS = 100;

/** Node control acts on the platform's hosts: the owner's, as the original (admins get 403). */
export function requireOwner(session: SessionContext): void {
  if (session.role !== 'owner') throw new DomainError('forbidden', 'Node control is for the owner.');
}

export function clusterNodes(deps: Pick<Deps, 'cluster'>): ClusterNodes {
  if (!deps.cluster.nodes) throw new DomainError('distributed_unavailable', 'This cluster reports no nodes.');
  return deps.cluster.nodes;
}

/** The node cache, once its first list is in (503 unavailable while the cluster cannot be reached). */
export async function syncedNodes(deps: Pick<Deps, 'cluster'> & NodesParts): Promise<NodeCache> {
  clusterNodes(deps);
  const cache = deps.nodeCache;
  if (!cache) throw new DomainError('distributed_unavailable', 'This cluster reports no nodes.');
  try {
    await cache.ready();
  } catch (err) {
    throw new DomainError('unavailable', 'The cluster cannot be reached.', { cause: err });
  }
  return cache;
}

type TaskRow = typeof nodeTasks.$inferSelect;

export function toTaskView(row: TaskRow, withLog = false): NodeTaskView {
  const view: NodeTaskView = {
    id: row.id,
    request: row.request as NodeTaskRequest,
    actor: row.actor,
    state: row.state as NodeTaskView['state'],
    stage: row.stage,
    startedAt: row.startedAt.toISOString(),
  };
  if (row.finishedAt) view.finishedAt = row.finishedAt.toISOString();
  if (row.error) view.error = row.error;
  if (withLog && row.log) view.log = row.log;
  return view;
}

/** GET /nodes: the nodes as the cache sees them, each with the servers placed on it. */
export async function listNodes(deps: NodeDeps) {
  const [nodes, servers] = await Promise.all([syncedNodes(deps), syncedCache(deps)]);
  const db = deps.database.db;
  const [cap, recent] = await Promise.all([
    wakePolicyInForce(db).then((policy) => policy.maxRunningServers),
    db.select().from(nodeTasks).orderBy(desc(nodeTasks.startedAt)).limit(LISTED_TASKS),
  ]);
  const all = [...servers.all()].filter((s) => !s.system);
  return {
    sharedVolumes: clusterNodes(deps).sharedVolumes,
    nodes: nodes.all().map((node) => {
      const on = all.filter((s) => s.resource.spec.node === node.name || s.resource.status.node === node.name);
      return {
        name: node.name,
        role: node.approved ? 'game' : (node.labels['node-role.kubernetes.io/control-plane'] !== undefined ? 'control-plane' : ''),
        ready: node.ready,
        approved: node.approved,
        cordoned: node.unschedulable,
        addresses: [] as string[],
        architecture: node.labels['kubernetes.io/arch'] ?? '',
        capacity: node.capacity,
        allocatable: node.allocatable,
        servers: on.map((s) => s.resource.spec.name).sort(),
        running: on.filter((s) => holdsSlot(s.resource)).length,
        cap,
        maintenance: outOfService(recent, node.name),
      };
    }),
  };
}

/** Whether this cluster lets the control plane write nodes; a refusal or an error is "no", never a 500. */
async function available(deps: NodeDeps): Promise<boolean> {
  const nodes = deps.cluster.nodes;
  if (!nodes) return false;
  try {
    return await nodes.canWriteNodes();
  } catch (err) {
    deps.log.warn({ err }, 'the cluster did not say whether node writes are allowed; node control unavailable');
    return false;
  }
}

/** GET /settings/node-control: `{available, tasks}`; without node writes, `available: false` as the original. */
export async function nodeControl(deps: NodeDeps): Promise<{ available: boolean; tasks: NodeTaskView[] }> {
  const rows = await deps.database.db.select().from(nodeTasks).orderBy(desc(nodeTasks.startedAt)).limit(LISTED_TASKS);
  return { available: await available(deps), tasks: rows.map((r) => toTaskView(r)) };
}

/**
 * Node writes are allowed; else `node_control_unavailable` (RBAC). A cluster that does not answer
 * the question is an outage, `unavailable` with Retry-After, not a refusal.
 */
async function requireAvailable(deps: NodeDeps): Promise<void> {
  let allowed = false;
  try {
    allowed = (await deps.cluster.nodes?.canWriteNodes()) ?? false;
  } catch (err) {
    throw new DependencyUnavailable('cluster', 'it did not say whether node writes are allowed', 5, { cause: err });
  }
  if (!allowed) throw new DomainError('node_control_unavailable', 'The cluster does not let the control plane label or cordon nodes.');
}

export async function nodeTask(deps: NodeDeps, id: string): Promise<NodeTaskView> {
  await requireAvailable(deps);
  const [row] = await deps.database.db.select().from(nodeTasks).where(eq(nodeTasks.id, id));
  if (!row) throw new DomainError('not_found', 'node task not found');
  return toTaskView(row, true);
}

/** What a task needs of the node before it starts (400 bad_node, 409 conflict). */
async function checkRequest(deps: NodeDeps, request: NodeTaskRequest): Promise<void> {
  const nodes = await syncedNodes(deps);
  const node = nodes.get(request.name);
  if (!node) throw new DomainError('bad_node', `No node named ${request.name}.`);
  if (request.action !== 'approve' && !node.approved) throw new DomainError('bad_node', `${request.name} is not an approved game node.`);
  if (request.action === 'remove') {
    const servers = await syncedCache(deps);
    const pinned = [...servers.all()].filter((s) => s.resource.spec.node === request.name).map((s) => s.resource.spec.name);
    if (pinned.length > 0) {
      throw new DomainError('conflict', `Move the worlds on ${request.name} to another node first: ${pinned.sort().join(', ')}.`);
    }
  }
}

/**
 * Starts a node task: reauth, the cluster's permission, the node, then the row (the partial unique
 * index lets one run at a time: 409 node_operation_busy) and its audit in one transaction; the task
 * runs after the answer, on this replica, and any replica finishes it if this one dies.
 */
export async function startNodeTask(deps: NodeDeps, session: SessionContext, request: NodeTaskRequest, requestId: string | undefined): Promise<NodeTaskView> {
  await requireReauth(deps, session);
  await requireAvailable(deps);
  await checkRequest(deps, request);
  const id = Buffer.from(deps.random.bytes(16)).toString('hex');
  const now = deps.clock.now();
  let row: TaskRow;
  try {
    row = await deps.database.db.transaction(async (tx) => {
      const [inserted] = await tx
        .insert(nodeTasks)
        .values({ id, action: request.action, node: request.name, request, actor: session.userId, state: 'running', stage: 'preflight', startedAt: now, log: '' })
        .returning();
      await writeAudit(tx, { at: now, actor: session.userId, action: `platform.node.${request.action}`, target: id, detail: { node: request.name }, requestId: requestId ?? null });
      return inserted!;
    });
  } catch (err) {
    if (uniqueViolation(err) !== undefined) throw new DomainError('node_operation_busy', 'a node operation is already running');
    throw err;
  }
  void runNodeTask(deps, id).catch((err: unknown) => deps.log.warn({ err, task: id }, 'node task stopped; another round resumes it'));
  return toTaskView(row);
}

/** Starts a failed task's request again, as a new task (409 conflict unless it failed). */
export async function retryNodeTask(deps: NodeDeps, session: SessionContext, id: string, requestId: string | undefined): Promise<NodeTaskView> {
  await requireReauth(deps, session);
  await requireAvailable(deps);
  const [row] = await deps.database.db.select().from(nodeTasks).where(eq(nodeTasks.id, id));
  if (!row) throw new DomainError('not_found', 'node task not found');
  if (row.state !== 'failed') throw new DomainError('conflict', 'only failed node tasks can be retried');
  return startNodeTask(deps, session, row.request as NodeTaskRequest, requestId);
}

/** A cluster write's refusal as the envelope: a vanished node is bad_node, RBAC unavailable. */
export function nodeWriteError(err: unknown): Error {
  if (err instanceof ClusterNotFoundError) return new DomainError('bad_node', err.message);
  if (err instanceof ClusterForbiddenError) return new DomainError('node_control_unavailable', err.message);
  return err instanceof Error ? err : new Error(String(err));
}
