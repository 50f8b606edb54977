import { and, desc, eq, ne } from 'drizzle-orm';
import { nodeTasks, serverMoves } from '../../db/schema/nodes.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { uniqueViolation } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { requireServer } from '../servers/index.js';
import { JobHandedOver } from '../../adapters/cluster/world-jobs.js';
import { moveClaimName, type NodeLocalVolumes } from '../../adapters/cluster/world-volumes.js';
import { archiveForMove, deadLockTakers, heldFresh, holdWorld, releaseForMove, requireStopped, restoreForMove, type JobDeps } from '../worlds/index.js';
import type { NodesParts } from './cache.js';
import { clusterNodes, syncedNodes } from './service.js';
import type { ServersParts } from '../servers/index.js';

export type MoveDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'log' | 'random'> & JobDeps & ServersParts & NodesParts;
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
  const node = (await syncedNodes(deps)).get(target);
  if (!node || !node.approved || !node.ready || node.unschedulable) {
    throw new DomainError('bad_node', `${target} is not a ready, approved game node in service.`);
  }
  // A node whose last task (other than an approval) took it out of service (GET /nodes'
  // `maintenance`), a failed cordon or drain included, takes no world until a return succeeds.
  const [decisive] = await deps.database.db
    .select({ action: nodeTasks.action, state: nodeTasks.state })
    .from(nodeTasks)
    .where(and(eq(nodeTasks.node, target), ne(nodeTasks.action, 'approve')))
    .orderBy(desc(nodeTasks.startedAt))
    .limit(1);
  if (decisive && !(decisive.action === 'return' && decisive.state === 'succeeded')) {
    throw new DomainError('bad_node', `${target} is under maintenance (its last task: ${decisive.action}, ${decisive.state}).`);
  }
}

/** A move's preconditions: the server stopped (409 migration_busy, as the original) and the target usable. */
async function admit(deps: MoveDeps, server: string, target: string): Promise<void> {
  const nodes = clusterNodes(deps);
  if (!nodes.sharedVolumes && !nodes.volumes) {
    throw new DomainError('distributed_unavailable', 'This cluster keeps worlds on node-local volumes it cannot make on another node.');
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
 * The steps of a move, in order; `stage` is the step reached. Where every node reaches the world
 * volumes (sharedVolumes) only the placement moves: stopped → switching → releasing → succeeded.
 * On node-local volumes the world is copied first: archived from the source volume into the backup
 * store and read back (archiving), a claim made on the target node (creating), the archive
 * restored into it and checked against its sha-256 (restoring); then the switch, the one step that
 * commits, and the old volume released.
 */
export const MOVE_STAGES = ['stopped', 'archiving', 'creating', 'restoring', 'switching', 'releasing', 'succeeded'] as const;
export type MoveStage = (typeof MOVE_STAGES)[number];

/**
 * The process stops running a move where it is (the service shutting down): nothing more is
 * recorded, the world lock is left to lapse, and the move, still `running`, is retried once its
 * lock has lapsed, as a move whose process died is.
 */
export class MoveInterrupted extends Error {
  override name = 'MoveInterrupted';
}

/** Called after each step's work, before the next is recorded (tests stop a move there). */
export type MoveCheckpoint = (stage: MoveStage) => void | Promise<void>;

/** The world lock of a move's attempt: one holder per attempt, so an attempt that died cannot renew a retry's lock. */
const lockHolder = (row: Pick<MoveRow, 'id' | 'attempt'>) => `${row.id}:${row.attempt}`;

/**
 * Runs the move's steps under the world's lock (no backup, restore, file write or wake in between).
 * Until the switch, a failure leaves the server whole on its source (its spec, its volume, its
 * world untouched), and a retry starts again from the archive, since the world may have changed
 * while it was not locked; after the switch, a retry only releases the old volume.
 */
async function advance(deps: MoveDeps, row: MoveRow, checkpoint?: MoveCheckpoint): Promise<MoveRow> {
  const db = deps.database.db;
  let current = row;
  const set = async (fields: Partial<MoveRow>) => {
    const [updated] = await db.update(serverMoves).set({ ...fields, updatedAt: deps.clock.now() }).where(eq(serverMoves.id, row.id)).returning();
    return (current = updated!);
  };
  let lock;
  let interrupted = false;
  try {
    lock = await holdWorld(deps, row.server, lockHolder(row), 'migration');
  } catch (err) {
    return set({ state: 'failed', error: err instanceof Error ? err.message : String(err) });
  }
  const nodes = clusterNodes(deps);
  const volumes = nodes.sharedVolumes ? undefined : nodes.volumes;
  const note = (type: 'Normal' | 'Warning', reason: string, message: string) => nodes.note?.(row.server, type, reason, message);
  const step = async (stage: MoveStage, work: () => Promise<Partial<MoveRow> | void>) => {
    if (deps.shutdown?.aborted) throw new MoveInterrupted('the service is stopping');
    await set({ stage });
    const fields = await work();
    if (fields) await set(fields);
    await checkpoint?.(stage);
  };
  try {
    if (!current.switched) {
      await step('stopped', () => requireStopped(deps, row.server));
      if (volumes) await copyWorld(deps, volumes, current, step, note);
      await step('switching', async () => {
        // The target may have been cordoned, drained or removed while the world was copied: it is
        // checked again at the one step that commits, and the server stays whole on its source.
        await refuseDuringNodeTask(deps);
        await requireTarget(deps, row.targetNode);
        if (volumes) await volumes.switchTo(row.server, { claim: current.targetVolume!, node: row.targetNode });
        else await nodes.placeServer(row.server, row.targetNode);
        return { switched: true };
      });
      await note('Normal', 'MoveSwitched', `the server now runs on ${row.targetNode}${volumes ? ` from volume ${current.targetVolume}` : ''}`);
    }
    await step('releasing', async () => {
      const old = current.sourceVolume;
      if (volumes && current.targetVolume) await volumes.settle?.(row.server, current.targetVolume);
      if (volumes && old && old !== current.targetVolume) await releaseForMove(deps, row.server, old);
    });
    await note('Normal', 'MoveSucceeded', `moved from ${row.sourceNode || 'no node'} to ${row.targetNode}`);
    return await set({ state: 'succeeded', stage: 'succeeded', error: null });
  } catch (err) {
    // A step whose Job runs on while this process stops (JobHandedOver) is a stop too: the retry,
    // once the lock lapses, finds the Job gone or refuses while it still holds the volume.
    if (err instanceof MoveInterrupted || err instanceof JobHandedOver) {
      interrupted = true;
      lock.abandon();
      deps.log.warn({ server: row.server, move: row.id, stage: current.stage }, 'server move interrupted; it is retried once its world lock lapses');
      return current;
    }
    const where = current.switched ? 'it runs from its target node; a retry releases the old volume' : 'the server stays whole on its source node';
    deps.log.warn({ err, server: row.server, move: row.id, stage: current.stage }, `server move failed; ${where}`);
    await note('Warning', 'MoveFailed', `the move to ${row.targetNode} failed at ${current.stage}; ${where}`);
    return set({ state: 'failed', error: err instanceof Error ? err.message : String(err) });
  } finally {
    if (!interrupted) await lock.release().catch((err: unknown) => deps.log.warn({ err, move: row.id }, 'world lock release failed'));
  }
}

/**
 * The copy of a world between node-local volumes: archived and read back whole, a claim on the
 * target node, restored and checked against the archive's sha-256. The source volume is only read.
 */
async function copyWorld(
  deps: MoveDeps,
  volumes: NodeLocalVolumes,
  row: MoveRow,
  step: (stage: MoveStage, work: () => Promise<Partial<MoveRow> | void>) => Promise<void>,
  note: (type: 'Normal' | 'Warning', reason: string, message: string) => Promise<void> | undefined,
): Promise<void> {
  const target = row.targetVolume ?? moveClaimName(row.server, row.id);
  let backupId = '';
  await step('archiving', async () => {
    const source = await volumes.current(row.server);
    if (source.claim === target) throw new Error(`the world is on ${target} already`);
    const archive = await archiveForMove(deps, row.server);
    backupId = archive.backupId;
    await note('Normal', 'MoveArchived', `the world on ${source.claim} is archived and read back (sha-256 ${archive.sha256.slice(0, 12)}…)`);
    return { sourceVolume: source.claim, targetVolume: target, backupId };
  });
  await step('creating', () => volumes.create(row.server, target, row.targetNode));
  await step('restoring', async () => {
    await restoreForMove(deps, row.server, backupId, { claim: target, node: row.targetNode });
    await note('Normal', 'MoveRestored', `the archive is restored into ${target} on ${row.targetNode} and matches its sha-256`);
  });
}

export interface MoveOptions {
  /** Called after each step (tests interrupt or fail a move there). */
  checkpoint?: MoveCheckpoint;
}

export async function beginMove(deps: MoveDeps, session: SessionContext, server: string, target: string, requestId: string | undefined, options: MoveOptions = {}) {
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
  return toMoveView(await run(deps, row, options.checkpoint));
}

/**
 * A move on shared volumes is one quick step, answered when done; a copy between node-local
 * volumes runs on in the background (tracked with the world jobs, so a shutdown waits for it),
 * and the answer is the move as it starts: GET …/migrations follows its stage.
 */
async function run(deps: MoveDeps, row: MoveRow, checkpoint?: MoveCheckpoint): Promise<MoveRow> {
  if (clusterNodes(deps).sharedVolumes) return advance(deps, row, checkpoint);
  const done = advance(deps, row, checkpoint);
  deps.worlds.jobs.track(done);
  void done.catch((err: unknown) => deps.log.error({ err, move: row.id, server: row.server }, 'server move could not record its outcome'));
  return row;
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

/**
 * A move whose process died (or stopped) mid-step: still `running`, but its attempt's world lock
 * has lapsed, so nothing runs it. It is retried as a failed one is.
 */
async function abandoned(deps: MoveDeps, row: MoveRow): Promise<boolean> {
  return row.state === 'running' && !(await heldFresh(deps.database.db, deps.clock.now(), row.server, lockHolder(row), deadLockTakers(deps)));
}

/** How often every replica looks for moves whose runner died. */
export const ABANDONED_MOVES_INTERVAL_MS = 5_000;

/**
 * Marks failed every move whose runner died mid-step (its attempt's world lock lapsed, or the
 * replica that took it is among the dead ones its heartbeat watch saw), so that it never stays
 * `running` for good: until then the server's wake is refused (servers' `inMaintenance` reads the
 * running moves), and after it `retry` or a new move may run. Before the switch the server is whole
 * on its source; after it, it runs from its target and a retry only releases the old volume.
 * Conditional on the attempt, so a retry that took the move meanwhile is left alone.
 */
export async function failAbandonedMoves(deps: MoveDeps): Promise<number> {
  const db = deps.database.db;
  const running = await db.select().from(serverMoves).where(eq(serverMoves.state, 'running'));
  let failed = 0;
  for (const row of running) {
    if (!(await abandoned(deps, row))) continue;
    const where = row.switched ? 'it runs from its target node; a retry releases the old volume' : 'the server stays whole on its source node';
    const [marked] = await db
      .update(serverMoves)
      .set({ state: 'failed', error: `the process running this move ended at the ${row.stage} step; ${where}`, updatedAt: deps.clock.now() })
      .where(and(eq(serverMoves.id, row.id), eq(serverMoves.state, 'running'), eq(serverMoves.attempt, row.attempt)))
      .returning({ id: serverMoves.id });
    if (!marked) continue;
    failed += 1;
    deps.log.warn({ server: row.server, move: row.id, stage: row.stage }, `a server move whose runner died is marked failed; ${where}`);
  }
  return failed;
}

export async function retryMove(deps: MoveDeps, session: SessionContext, server: string, id: string, requestId: string | undefined, options: MoveOptions = {}) {
  await requireServer(deps, server);
  const db = deps.database.db;
  const [row] = await db.select().from(serverMoves).where(and(eq(serverMoves.server, server), eq(serverMoves.id, id)));
  if (!row) throw new DomainError('not_found', 'migration not found');
  if (row.state !== 'failed' && !(await abandoned(deps, row))) throw new DomainError('migration_busy', 'only a failed migration is retried');
  // Once switched, the server runs from its target: only the old volume is left to release.
  if (!row.switched) await admit(deps, server, row.targetNode);
  const [again] = await db
    .update(serverMoves)
    .set({ state: 'running', error: null, attempt: row.attempt + 1, updatedAt: deps.clock.now() })
    .where(and(eq(serverMoves.id, id), eq(serverMoves.state, row.state), eq(serverMoves.attempt, row.attempt)))
    .returning();
  if (!again) throw new DomainError('migration_busy', 'the migration is being retried already');
  await writeAudit(db, { at: deps.clock.now(), actor: session.userId, action: 'server.migrate.retry', target: server, detail: { id, attempt: again.attempt }, requestId: requestId ?? null });
  return toMoveView(await run(deps, again, options.checkpoint));
}
