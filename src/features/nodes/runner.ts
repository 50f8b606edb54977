import { and, eq, sql } from 'drizzle-orm';
import { ABANDONED_MOVES_INTERVAL_MS, failAbandonedMoves, type MoveDeps } from './moves.js';
import { backgroundLoop, holdLease, LEASE_KEYS, releaseLease, takeLease, type BackgroundTask } from '../../coordination/index.js';
import { nodeTasks, serverMoves } from '../../db/schema/nodes.js';
import type { Deps } from '../../deps.js';
import { raiseEvent, type FleetEvent } from '../notifications/index.js';
import { clusterCall, syncedCache } from '../servers/index.js';
import type { NodeTaskRequest } from './schema.js';
import type { ServersParts } from '../servers/index.js';

type RunDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'log' | 'replica' | 'rcon'> & ServersParts;

/** A task's lease: long enough to outlive a slow step, renewed while its replica lives. */
const TASK_LEASE_MS = 60_000;
const TASK_RENEW_MS = 15_000;
/** How often a waiting step looks again (real time: it waits on the cluster, not on the clock). */
export const POLL_MS = 250;
/** The original's execution limit: a task still waiting after this fails. */
const TASK_DEADLINE_MS = 45 * 60_000;
/** The log a task keeps (its tail). */
const MAX_LOG = 64 << 10;
/** How often the recovery round looks for running tasks that no living replica advances. */
const RECOVERY_INTERVAL_MS = 30_000;

const WARNING = 'This server is stopping for node maintenance; it will be back soon.';

class TaskFailure extends Error {
  override name = 'TaskFailure';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Runs a running task to its end if this replica takes its lease (the starting replica at once; a
 * recovery round on any replica when its holder died). Every step is idempotent (cordon, stop,
 * wait), so a task resumed by another replica runs its steps again from the start.
 */
export async function runNodeTask(deps: RunDeps, id: string): Promise<void> {
  const db = deps.database.db;
  const key = LEASE_KEYS.nodeTask(id);
  if (!(await takeLease(db, deps.clock.now(), { key, holder: deps.replica, purpose: 'node-task', ttlMs: TASK_LEASE_MS }))) return;
  const held = holdLease({ db, clock: deps.clock, log: deps.log }, { key, holder: deps.replica, ttlMs: TASK_LEASE_MS }, TASK_RENEW_MS);
  try {
    const [row] = await db.select().from(nodeTasks).where(eq(nodeTasks.id, id));
    if (!row || row.state !== 'running') return;
    const request = row.request as NodeTaskRequest;
    const deadline = row.startedAt.getTime() + TASK_DEADLINE_MS;
    let outcome: { state: 'succeeded' | 'failed'; error?: string };
    // Taking a node out starts its maintenance for the webhooks (once, also when another replica resumes the task).
    if (request.action !== 'approve' && request.action !== 'return') {
      await raiseEvent(db, maintenanceEvent(deps, id, request, 'node.maintenance_started'));
    }
    try {
      await execute(deps, id, request, deadline);
      outcome = { state: 'succeeded' };
    } catch (err) {
      outcome = { state: 'failed', error: err instanceof Error ? err.message : String(err) };
      deps.log.warn({ err, task: id, action: request.action, node: request.name }, 'node task failed');
    }
    await db.transaction(async (tx) => {
      await tx
        .update(nodeTasks)
        .set({ state: outcome.state, error: outcome.error ?? null, finishedAt: deps.clock.now(), stage: outcome.state === 'succeeded' ? 'done' : sql`${nodeTasks.stage}` })
        .where(eq(nodeTasks.id, id));
      if (request.action === 'return' && outcome.state === 'succeeded') await raiseEvent(tx, maintenanceEvent(deps, id, request, 'node.maintenance_ended'));
    });
  } finally {
    held.abandon();
    await releaseLease(db, key, deps.replica);
  }
}

/** A node's maintenance as a webhook event, keyed by its task so that a resumed task raises it once. */
function maintenanceEvent(deps: RunDeps, id: string, request: NodeTaskRequest, type: 'node.maintenance_started' | 'node.maintenance_ended'): FleetEvent {
  const started = type === 'node.maintenance_started';
  return {
    type,
    at: deps.clock.now(),
    summary: started ? `Node ${request.name} is being taken out for maintenance (${request.action})` : `Node ${request.name} is back in service`,
    subject: { kind: 'node', id: request.name },
    data: { node: request.name, action: request.action, task: id },
    key: `node-task:${id}:${started ? 'started' : 'ended'}`,
  };
}

async function note(deps: RunDeps, id: string, line: string): Promise<void> {
  await deps.database.db
    .update(nodeTasks)
    .set({ log: sql`right(${nodeTasks.log} || ${`${line}\n`}, ${MAX_LOG})` })
    .where(eq(nodeTasks.id, id));
}

async function stage(deps: RunDeps, id: string, name: string): Promise<void> {
  await deps.database.db.update(nodeTasks).set({ stage: name }).where(eq(nodeTasks.id, id));
  await note(deps, id, `[felis] ${name}`);
}

function nodesOf(deps: RunDeps) {
  const nodes = deps.cluster.nodes;
  if (!nodes) throw new TaskFailure('this cluster reports no nodes');
  return nodes;
}

async function execute(deps: RunDeps, id: string, request: NodeTaskRequest, deadline: number): Promise<void> {
  const nodes = nodesOf(deps);
  const node = request.name;
  switch (request.action) {
    case 'approve':
      await stage(deps, id, 'labelling');
      await nodes.setGameNode(node, true);
      return;
    case 'cordon':
      await stage(deps, id, 'cordoning');
      await nodes.setUnschedulable(node, true);
      return;
    case 'return':
      await stage(deps, id, 'uncordoning');
      await nodes.setUnschedulable(node, false);
      return;
    case 'drain':
      await drain(deps, id, node, deadline);
      return;
    case 'remove':
      await drain(deps, id, node, deadline);
      await stage(deps, id, 'unlabelling');
      await nodes.setGameNode(node, false);
      return;
  }
}

/** The servers whose running move has the node as its target: their world is being copied there. */
async function movingIn(deps: RunDeps, node: string): Promise<string[]> {
  const rows = await deps.database.db
    .select({ server: serverMoves.server })
    .from(serverMoves)
    .where(and(eq(serverMoves.targetNode, node), eq(serverMoves.state, 'running')));
  return rows.map((r) => r.server);
}

/** The servers whose world is pinned to the node, whose pod runs there, or whose world is moving there. */
async function serversOn(deps: RunDeps, node: string): Promise<string[]> {
  const cache = await syncedCache(deps);
  const running = await nodesOf(deps).serversRunningOn(node);
  const names = new Set([...running, ...(await movingIn(deps, node))]);
  for (const s of cache.all()) if (s.resource.spec.node === node && !s.system) names.add(s.resource.spec.name);
  return [...names].sort();
}

/**
 * Cordon, warn the players, stop every server on the node gracefully, then wait until none runs a
 * pod there and no move onto the node runs: their world volumes are released (no pod mounts them)
 * and nothing new is placed there. A move copying a world in fails at its switch while this task
 * runs (moves.ts checks for a node task there), or has switched already and its server, stopped,
 * is on the node: either way it is waited for and counted.
 */
async function drain(deps: RunDeps, id: string, node: string, deadline: number): Promise<void> {
  const nodes = nodesOf(deps);
  await stage(deps, id, 'cordoning');
  await nodes.setUnschedulable(node, true);
  const servers = await serversOn(deps, node);
  const cache = await syncedCache(deps);
  await stage(deps, id, 'warning');
  for (const name of servers) {
    if (cache.get(name)?.resource.status.phase !== 'Running') continue;
    // Best effort: a server whose RCON does not answer is stopped all the same.
    await deps.rcon.command(name, `say ${WARNING}`).then(
      () => note(deps, id, `warned the players of ${name}`),
      () => note(deps, id, `could not warn the players of ${name}`),
    );
  }
  await stage(deps, id, 'stopping');
  for (const name of servers) {
    const server = cache.get(name);
    if (!server || (server.resource.spec.desiredState === 'Stopped' && server.resource.status.phase === 'Stopped')) continue;
    await clusterCall(name, () => deps.cluster.setDesiredState(name, 'Stopped'));
    await note(deps, id, `stopping ${name}`);
    await nodes.note?.(name, 'Normal', 'NodeDrained', `stopped cleanly: node ${node} is being drained`);
  }
  await stage(deps, id, 'releasing');
  for (;;) {
    const left = new Set(await nodes.serversRunningOn(node));
    for (const name of servers) if ((cache.get(name)?.resource.status.phase ?? 'Stopped') !== 'Stopped') left.add(name);
    for (const name of await movingIn(deps, node)) left.add(name);
    if (left.size === 0) break;
    if (deps.clock.now().getTime() > deadline) throw new TaskFailure(`still running on ${node} after the 45-minute limit: ${[...left].sort().join(', ')}`);
    await sleep(POLL_MS);
  }
  await note(deps, id, `released ${servers.length} world volume(s)`);
}

/**
 * Finds running tasks whose replica died and runs them here (the task's lease decides who), and
 * marks failed the server moves whose runner died (moves.ts, every 5 s: a wake waits for it).
 */
export function nodeTasksRecovery(deps: RunDeps & MoveDeps): BackgroundTask {
  const loopDeps = { db: deps.database.db, clock: deps.clock, log: deps.log, replica: deps.replica };
  const tasks = backgroundLoop(loopDeps, {
    name: 'node-tasks',
    replicas: 'every',
    intervalMs: RECOVERY_INTERVAL_MS,
    round: async () => {
      const running = await deps.database.db.select({ id: nodeTasks.id }).from(nodeTasks).where(eq(nodeTasks.state, 'running'));
      for (const { id } of running) await runNodeTask(deps, id);
    },
  });
  const moves = backgroundLoop(loopDeps, {
    name: 'abandoned-moves',
    replicas: 'every',
    intervalMs: ABANDONED_MOVES_INTERVAL_MS,
    round: async () => {
      await failAbandonedMoves(deps);
    },
  });
  return {
    name: 'node-tasks',
    start() {
      tasks.start();
      moves.start();
    },
    async stop() {
      await Promise.all([tasks.stop(), moves.stop()]);
    },
  };
}
