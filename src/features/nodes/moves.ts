import { and, desc, eq, ne } from 'drizzle-orm';
import { nodeTasks, serverMoves } from '../../db/schema/nodes.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { uniqueViolation } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { requireServer } from '../servers/index.js';
import { holdWorld, requireStopped } from '../worlds/index.js';
import { nodeCacheOf } from './cache.js';
import { clusterNodes } from './service.js';

type MoveDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'log' | 'random'>;
type MoveRow = typeof serverMoves.$inferSelect;

export function toMoveView(row: MoveRow) {
  const view: {
    id: string;
    server: string;
    state: 'running' | 'succeeded' | 'failed';
    stage: string;
    sourceNode: string;
    targetNode: string;
    switched: boolean;
    attempt: number;
    started: string;
    updated: string;
    error?: string;
  } = {
    id: row.id,
    server: row.server,
    state: row.state as 'running' | 'succeeded' | 'failed',
    stage: row.stage,
    sourceNode: row.sourceNode,
    targetNode: row.targetNode,
    switched: row.switched,
    attempt: row.attempt,
    started: row.startedAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
  if (row.error) view.error = row.error;
  return view;
}

/** The original's guard: no move starts while a node task runs (409 node_operation_busy). */
async function refuseDuringNodeTask(deps: MoveDeps): Promise<void> {
  const [running] = await deps.database.db.select({ id: nodeTasks.id }).from(nodeTasks).where(eq(nodeTasks.state, 'running')).limit(1);
  if (running) throw new DomainError('node_operation_busy', 'node maintenance is in progress');
}

/** A target that takes servers now: an approved, ready, uncordoned node (400 bad_node). */
async function requireTarget(deps: MoveDeps, target: string): Promise<void> {
  const cache = nodeCacheOf(clusterNodes(deps));
  try {
    await cache.ready();
  } catch (err) {
    throw new DomainError('unavailable', 'The cluster cannot be reached.', { cause: err });
  }
  const node = cache.get(target);
  if (!node || !node.approved || !node.ready || node.unschedulable) {
    throw new DomainError('bad_node', `${target} is not a ready, approved game node in service.`);
  }
}

/** A move's preconditions: the server stopped (409 migration_busy, as the original) and the target usable. */
async function admit(deps: MoveDeps, server: string, target: string): Promise<void> {
  if (!clusterNodes(deps).sharedVolumes) {
    // The copy of a node-local volume (archive, verify, a claim on the target, restore) is not built yet.
    throw new DomainError('distributed_unavailable', 'This cluster keeps worlds on node-local volumes; moving one to another node is not available yet (KUBE_SHARED_WORLD_VOLUMES).');
  }
  await refuseDuringNodeTask(deps);
  await requireTarget(deps, target);
  try {
    await requireStopped(deps, server);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'not_stopped') throw new DomainError('migration_busy', 'server must be fully stopped with no maintenance operation');
    throw err;
  }
}

/**
 * Runs the move's steps under the world's lock (no backup, restore, file write or wake in between):
 * `switching` moves the placement, the one step that commits; until it has, a failure leaves the
 * server whole on its source node, and a retry starts again from here. On this cluster every node
 * reaches the world volumes (sharedVolumes), so the placement is all that moves.
 */
async function advance(deps: MoveDeps, row: MoveRow): Promise<MoveRow> {
  const db = deps.database.db;
  const set = async (fields: Partial<MoveRow>) => {
    const [updated] = await db.update(serverMoves).set({ ...fields, updatedAt: deps.clock.now() }).where(eq(serverMoves.id, row.id)).returning();
    return updated!;
  };
  let lock;
  try {
    lock = await holdWorld(deps, row.server, row.id, 'migration');
  } catch (err) {
    return set({ state: 'failed', error: err instanceof Error ? err.message : String(err) });
  }
  try {
    const nodes = clusterNodes(deps);
    if (!nodes.sharedVolumes) {
      throw new Error('this cluster keeps worlds on node-local volumes, and copying one to another node is not available here');
    }
    await requireStopped(deps, row.server);
    await set({ stage: 'switching' });
    await nodes.placeServer(row.server, row.targetNode);
    await set({ switched: true, stage: 'releasing' });
    return await set({ state: 'succeeded', stage: 'succeeded', error: null });
  } catch (err) {
    deps.log.warn({ err, server: row.server, move: row.id }, 'server move failed; the server stays on its source node');
    return set({ state: 'failed', error: err instanceof Error ? err.message : String(err) });
  } finally {
    await lock.release().catch((err: unknown) => deps.log.warn({ err, move: row.id }, 'world lock release failed'));
  }
}

export async function beginMove(deps: MoveDeps, session: SessionContext, server: string, target: string, requestId: string | undefined) {
  const cached = await requireServer(deps, server);
  const db = deps.database.db;
  const [open] = await db.select().from(serverMoves).where(and(eq(serverMoves.server, server), ne(serverMoves.state, 'succeeded'))).limit(1);
  if (open) {
    if (open.targetNode === target) return toMoveView(open);
    throw new DomainError('migration_busy', `${server} has an unfinished move to ${open.targetNode}.`);
  }
  const source = cached.resource.spec.node ?? cached.resource.status.node ?? '';
  if (source === target) throw new DomainError('bad_node', `${server} is already on ${target}.`);
  await admit(deps, server, target);
  const now = deps.clock.now();
  const id = Buffer.from(deps.random.bytes(16)).toString('hex');
  let row: MoveRow;
  try {
    row = await db.transaction(async (tx) => {
      const [inserted] = await tx
        .insert(serverMoves)
        .values({ id, server, state: 'running', stage: 'stopped', sourceNode: source, targetNode: target, actor: session.userId, startedAt: now, updatedAt: now })
        .returning();
      await writeAudit(tx, { at: now, actor: session.userId, action: 'server.migrate', target: server, detail: { id, from: source, to: target }, requestId: requestId ?? null });
      return inserted!;
    });
  } catch (err) {
    if (uniqueViolation(err) !== undefined) throw new DomainError('migration_busy', `${server} has an unfinished move.`);
    throw err;
  }
  return toMoveView(await advance(deps, row));
}

export async function latestMove(deps: MoveDeps, server: string, id: string | undefined) {
  await requireServer(deps, server);
  const [row] = await deps.database.db
    .select()
    .from(serverMoves)
    .where(id === undefined ? eq(serverMoves.server, server) : and(eq(serverMoves.server, server), eq(serverMoves.id, id)))
    .orderBy(desc(serverMoves.startedAt))
    .limit(1);
  if (!row) throw new DomainError('not_found', 'migration not found');
  return toMoveView(row);
}

export async function retryMove(deps: MoveDeps, session: SessionContext, server: string, id: string, requestId: string | undefined) {
  await requireServer(deps, server);
  const db = deps.database.db;
  const [row] = await db.select().from(serverMoves).where(and(eq(serverMoves.server, server), eq(serverMoves.id, id)));
  if (!row) throw new DomainError('not_found', 'migration not found');
  if (row.state !== 'failed') throw new DomainError('migration_busy', 'only a failed migration is retried');
  await admit(deps, server, row.targetNode);
  const [again] = await db
    .update(serverMoves)
    .set({ state: 'running', error: null, attempt: row.attempt + 1, updatedAt: deps.clock.now() })
    .where(and(eq(serverMoves.id, id), eq(serverMoves.state, 'failed')))
    .returning();
  if (!again) throw new DomainError('migration_busy', 'the migration is being retried already');
  await writeAudit(db, { at: deps.clock.now(), actor: session.userId, action: 'server.migrate.retry', target: server, detail: { id, attempt: again.attempt }, requestId: requestId ?? null });
  return toMoveView(await advance(deps, again));
}
