import { and, desc, eq, gt, inArray, isNull, or } from 'drizzle-orm';
import { worldFileOps, type FileOpError } from '../../../db/schema/world-files.js';
import { worldJobs } from '../../../db/schema/worlds.js';
import { isErrno } from '../../../lib/errno.js';
import { DomainError } from '../../../lib/errors.js';
import { JobFailure, startWorldJob, type JobDeps } from '../jobs/index.js';

export type FileOpKind = 'upload' | 'unzip';

/** How long a finished op stays in the list (the original's half hour). */
export const FINISHED_OPS_SHOWN_MS = 30 * 60 * 1000;

/** A refusal an op ends with: a code the file routes use, or an unzip's own, with its details. */
export class FileOpFailure extends Error {
  override name = 'FileOpFailure';
  constructor(readonly detail: FileOpError) {
    super(detail.message);
  }
}


/** What a failed op reports: our refusals as they are, a full disk as volume_full, anything else without its stack. */
function opErrorOf(err: unknown): FileOpError | undefined {
  if (err instanceof FileOpFailure) return err.detail;
  if (err instanceof DomainError) return { code: err.code, message: err.message };
  if (isErrno(err, 'ENOSPC', 'EDQUOT')) return { code: 'volume_full', message: 'The world volume is full; nothing was changed.' };
  return undefined;
}

export interface OpProgress {
  /** Records how far the op got; written at most every `step` bytes, and always at the end. */
  report(done: number): Promise<void>;
  setTotal(total: number): Promise<void>;
}

/**
 * Starts a file op as a world job (the world's lock, the stopped check, the job row) and records
 * its details under the job's id before answering, so the ops list shows it at once. The op's
 * failure is kept with its code and details; the job's message starts with the code.
 */
export async function startFileOp(
  deps: JobDeps,
  op: { serverName: string; kind: FileOpKind; path: string; total: number; requestedBy: string },
  run: (ctx: { jobId: string; progress: OpProgress }) => Promise<{ files: number; bytes: number }>,
): Promise<FileOpView> {
  const { db } = deps.database;
  let recorded!: (view: FileOpView) => void;
  const ready = new Promise<FileOpView>((resolve) => (recorded = resolve));
  const { done } = await startWorldJob(
    deps,
    { serverName: op.serverName, kind: op.kind, lockKind: op.kind, requestedBy: op.requestedBy },
    async (jobId) => {
      const startedAt = deps.clock.now();
      await db.insert(worldFileOps).values({ id: jobId, serverName: op.serverName, op: op.kind, path: op.path, total: op.total, createdAt: startedAt });
      recorded({ id: jobId, op: op.kind, path: op.path, state: 'running', started_at: startedAt.toISOString(), done: 0, total: op.total });
      let total = op.total;
      let written = 0;
      const progress: OpProgress = {
        setTotal: async (t) => {
          total = t;
          await db.update(worldFileOps).set({ total: t }).where(eq(worldFileOps.id, jobId));
        },
        report: async (d) => {
          if (d !== total && d - written < Math.max(1 << 20, total / 100)) return;
          written = d;
          await db.update(worldFileOps).set({ done: d }).where(eq(worldFileOps.id, jobId));
        },
      };
      try {
        const result = await run({ jobId, progress });
        await db.update(worldFileOps).set({ done: total, files: result.files, bytes: result.bytes }).where(eq(worldFileOps.id, jobId));
      } catch (err) {
        const detail = opErrorOf(err);
        if (!detail) throw err;
        await db.update(worldFileOps).set({ error: detail }).where(eq(worldFileOps.id, jobId));
        throw new JobFailure(`${detail.code}: ${detail.message}`);
      }
    },
  );
  // The job may fail before it records the op (the database went away): that failure is the answer.
  const failed = done.then(() => {
    throw new DomainError('unavailable', 'The file operation could not be recorded; try again.');
  });
  return Promise.race([ready, failed]);
}

export interface FileOpView {
  id: string;
  op: FileOpKind;
  path: string;
  state: 'running' | 'succeeded' | 'failed';
  started_at: string;
  finished_at?: string;
  done: number;
  total: number;
  files?: number;
  bytes?: number;
  error?: FileOpError;
}

type OpRow = typeof worldFileOps.$inferSelect;
type JobRow = typeof worldJobs.$inferSelect;

/** A job that failed without saying why in the op (the replica running it died): the original's job_failed. */
function failureOf(op: OpRow, job: JobRow): FileOpError {
  if (op.error) return op.error;
  const coded = /^([a-z_]+): (.+)$/s.exec(job.message ?? '');
  if (coded) return { code: coded[1]!, message: coded[2]! };
  return { code: 'job_failed', message: `The file operation stopped before it could report how it went (${job.message ?? 'no reason'}); run it again.` };
}

export function toFileOpView(op: OpRow, job: JobRow): FileOpView {
  return {
    id: op.id,
    op: op.op,
    path: op.path,
    state: job.state,
    started_at: job.startedAt.toISOString(),
    ...(job.finishedAt ? { finished_at: job.finishedAt.toISOString() } : {}),
    done: op.done,
    total: op.total,
    ...(job.state === 'succeeded' && op.files !== null ? { files: op.files, bytes: op.bytes ?? 0 } : {}),
    ...(job.state === 'failed' ? { error: failureOf(op, job) } : {}),
  };
}

/** The server's uploads and unzips, newest first: those running and those that ended in the last half hour. */
export async function listFileOps(deps: Pick<JobDeps, 'database' | 'clock'>, serverName: string): Promise<FileOpView[]> {
  const since = new Date(deps.clock.now().getTime() - FINISHED_OPS_SHOWN_MS);
  const rows = await deps.database.db
    .select({ op: worldFileOps, job: worldJobs })
    .from(worldFileOps)
    .innerJoin(worldJobs, eq(worldJobs.id, worldFileOps.id))
    .where(
      and(
        eq(worldFileOps.serverName, serverName),
        inArray(worldJobs.kind, ['upload', 'unzip']),
        or(eq(worldJobs.state, 'running'), isNull(worldJobs.finishedAt), gt(worldJobs.finishedAt, since)),
      ),
    )
    .orderBy(desc(worldJobs.startedAt))
    .limit(100);
  return rows.map((r) => toFileOpView(r.op, r.job));
}
