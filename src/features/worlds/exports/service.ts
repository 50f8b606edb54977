import type { Readable } from 'node:stream';
import { and, eq, lt } from 'drizzle-orm';
import type { StepOutcome, WorldJobPlan } from '../../../adapters/cluster/world-jobs.js';
import { worldExports } from '../../../db/schema/worlds.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { readableBackup } from '../backups/index.js';
import { newId, requireWorld, runnerOf, startWorldJob, stepFailed, untilRecorded, type Caller, type JobDeps, type JobOutcome, type SettleDeps } from '../jobs/index.js';
import { readWorldTimes } from '../settings/index.js';
import { downloadTarget } from '../volumes/index.js';
import type { WorldsParts } from '../volumes/index.js';
import type { ServersParts } from '../../servers/index.js';

export type ExportRow = typeof worldExports.$inferSelect;

const stamp = (d: Date) => d.toISOString().slice(0, 19).replaceAll(':', '-');

async function insertExport(deps: Pick<Deps, 'database' | 'clock'>, row: Omit<ExportRow, 'createdAt' | 'expiresAt' | 'message'>) {
  const { exportTtlMs } = await readWorldTimes(deps.database.db);
  const now = deps.clock.now();
  const [created] = await deps.database.db
    .insert(worldExports)
    .values({ ...row, createdAt: now, expiresAt: new Date(now.getTime() + exportTtlMs) })
    .returning();
  return created!;
}

/** A backup's own archive, ready at once, for the caller alone (owner or staff, who may read the backup). */
export async function exportBackup(deps: Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'random'> & ServersParts, input: { serverName: string; backupId: string; caller: Caller }) {
  const access = await requireWorld(deps, input.serverName, input.caller, 'backups.write');
  const backup = await readableBackup(deps, input.serverName, input.backupId, input.caller, access);
  return insertExport(deps, {
    ticket: newId(deps.random),
    serverName: backup.serverName,
    requestedBy: input.caller.userId,
    source: 'backup',
    state: 'ready',
    storageKey: backup.storageKey,
    filename: `${backup.serverName}-${stamp(backup.createdAt)}.tar.gz`,
    contentType: 'application/gzip',
  });
}

/**
 * An archive of a stopped world, or of one file or folder in it (`path`), for the caller alone
 * (owner or staff), made by a job under the world's lock and kept in the store until it expires.
 * Where the volume is not a local folder (Kubernetes) only the whole world can be exported: a part
 * needs the file routes' checks first.
 */
export async function exportWorld(deps: JobDeps, input: { serverName: string; caller: Caller; path?: string; need: 'backups.write' | 'files.read' }) {
  const { serverName, caller, path = '' } = input;
  await requireWorld(deps, serverName, caller, input.need);
  const runner = runnerOf(deps);
  let isFile = false;
  let name = serverName;
  if (deps.worlds.folders) {
    const target = await downloadTarget(await deps.worlds.folders.folder(serverName), path);
    isFile = target.isFile;
    name = target.segments.at(-1) ?? serverName;
  } else if (path !== '') {
    throw new DomainError('unavailable', 'World files cannot be reached from this service.');
  }
  const ticket = newId(deps.random);
  const row = await insertExport(deps, {
    ticket,
    serverName,
    requestedBy: caller.userId,
    source: 'world',
    state: 'pending',
    storageKey: `exports/${ticket}`,
    filename: isFile ? name : `${name}-${stamp(deps.clock.now())}.tar.gz`,
    contentType: isFile ? 'application/octet-stream' : 'application/gzip',
  });
  const job = { serverName, kind: 'export', lockKind: 'export', requestedBy: caller.userId, busy: () => runner.busy(serverName) } as const;
  await startWorldJob(deps, job, async (jobId) => {
    const plan: WorldJobPlan = { jobId, serverName, kind: 'export', step: { op: 'export', key: row.storageKey, path }, exportTicket: ticket };
    const outcome = await runner.run(plan);
      return untilRecorded(deps, plan.jobId, () => settleExport(deps, plan, outcome));
  }).catch(async (err: unknown) => {
    await deps.database.db.delete(worldExports).where(eq(worldExports.ticket, ticket));
    throw err;
  });
  return row;
}

/** Records what an export's step reported: the export is ready, or failed. */
export async function settleExport(deps: SettleDeps, plan: WorldJobPlan, outcome: StepOutcome): Promise<JobOutcome> {
  const ticket = plan.exportTicket!;
  const setState = (state: 'ready' | 'failed', why?: string) =>
    deps.database.db.update(worldExports).set({ state, message: why ?? null }).where(eq(worldExports.ticket, ticket));
  if (outcome.ok) {
    await setState('ready');
    return {};
  }
  await setState('failed', 'the archive could not be made');
  throw stepFailed(outcome);
}

/** The state a client sees: the original's `pending`, `ready` or `failed` (the panel takes any other as final). */
export function exportStateOf(row: Pick<ExportRow, 'state'>): 'pending' | 'ready' | 'failed' {
  return row.state === 'ready' || row.state === 'failed' ? row.state : 'pending';
}

/**
 * The caller's own live export: anyone else's ticket is 404, as if it did not exist; one of the
 * caller's that was downloaded or ran out of time is 410 `export_expired` (the original's).
 */
export async function ownExport(deps: Pick<Deps, 'database' | 'clock'>, ticket: string, userId: string): Promise<ExportRow> {
  const [row] = await deps.database.db.select().from(worldExports).where(and(eq(worldExports.ticket, ticket), eq(worldExports.requestedBy, userId)));
  if (!row) throw new DomainError('not_found', 'No such export.');
  if (row.state === 'expired' || row.state === 'spent' || row.expiresAt <= deps.clock.now()) {
    throw new DomainError('export_expired', 'This export was downloaded already or its time ran out.');
  }
  return row;
}

/**
 * The caller's ready export and its bytes from the store (409 before it is ready, 503 when the store
 * fails). The download spends the ticket in one statement, so of two downloads at once on any
 * replicas only one gets the bytes; a store that cannot be read gives the ticket back.
 */
export async function openExport(deps: Pick<Deps & WorldsParts, 'database' | 'clock' | 'worlds' | 'log'>, ticket: string, userId: string): Promise<{ row: ExportRow; body: Readable }> {
  const row = await ownExport(deps, ticket, userId);
  if (row.state !== 'ready') throw new DomainError('conflict', `The export is ${exportStateOf(row)}.`);
  const db = deps.database.db;
  const spent = await db
    .update(worldExports)
    .set({ state: 'spent' })
    .where(and(eq(worldExports.ticket, ticket), eq(worldExports.state, 'ready')))
    .returning({ ticket: worldExports.ticket });
  if (spent.length === 0) throw new DomainError('export_expired', 'This export was downloaded already.');
  try {
    return { row, body: await deps.worlds.store.get(row.storageKey) };
  } catch (err) {
    deps.log.warn({ err, ticket: row.ticket }, 'export unreadable from the backup store');
    await db.update(worldExports).set({ state: 'ready' }).where(eq(worldExports.ticket, ticket));
    throw new DomainError('unavailable', 'The backup store cannot be reached.');
  }
}

/** Expires exports past their time; an archive made for an export is deleted with it. */
export async function sweepExpiredExports(deps: Pick<Deps & WorldsParts, 'database' | 'clock' | 'worlds' | 'log'>): Promise<number> {
  const due = await deps.database.db
    .update(worldExports)
    .set({ state: 'expired' })
    .where(and(lt(worldExports.expiresAt, deps.clock.now()), eq(worldExports.source, 'world')))
    .returning();
  for (const row of due) {
    await deps.worlds.store.delete(row.storageKey).catch((err: unknown) => deps.log.warn({ err, ticket: row.ticket }, 'could not delete an expired export'));
  }
  return due.length;
}
