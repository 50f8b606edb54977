import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { submissionUploads, submissions } from '../../../db/schema/submissions.js';
import { DomainError } from '../../../lib/errors.js';
import { StagePartError } from './context-store.js';
import { findSubmission, requireStore, type SubmissionDeps } from './service.js';
import type { SubmissionView } from './schema.js';
import { readUploadLimits, type UploadLimits } from './settings.js';
import { toSubmissionView } from './views.js';
import { raiseEvent } from '../../notifications/index.js';

/** How long a part may hold the upload before another may start (a dead writer's claim lapses). */
const CLAIM_MS = 10 * 60 * 1000;

export interface UploadProgress {
  received: number;
  part_max_bytes: number;
  max_context_bytes: number;
}

/**
 * A request body as the pipeline hands it over (RawBody): its iteration itself throws 413 past the
 * route's limit and 400 digest_mismatch after the last byte, so the store keeps nothing of a bad part.
 */
export type IncomingPart = AsyncIterable<Uint8Array>;

/** The most a part starting at `offset` may carry: part_max_bytes, and no more than the context's room after it. */
function partRoom(limits: UploadLimits, offset: number): number {
  return Math.min(limits.partMaxBytes, limits.contextMaxBytes - offset);
}

/** The body limit of a part at `offset`, before the part is read (an offset the route refuses counts as 0). */
export async function partLimit(db: Queryable, offset: number): Promise<number> {
  const limits = await readUploadLimits(db);
  return Math.max(0, partRoom(limits, Number.isSafeInteger(offset) && offset >= 0 ? offset : 0));
}

async function pendingOwn(deps: SubmissionDeps, userId: string, id: string) {
  const row = await findSubmission(deps.database.db, { userId }, id);
  if (row.status !== 'pending_review') throw new DomainError('conflict', 'Only a submission pending review takes a context.');
  return row;
}

export async function uploadProgress(deps: SubmissionDeps, userId: string, id: string): Promise<UploadProgress> {
  const row = await findSubmission(deps.database.db, { userId }, id);
  const db = deps.database.db;
  const [upload] = await db.select().from(submissionUploads).where(eq(submissionUploads.submissionId, row.id));
  const limits = await readUploadLimits(db);
  return { received: upload?.received ?? 0, part_max_bytes: limits.partMaxBytes, max_context_bytes: limits.contextMaxBytes };
}

/**
 * Claims the upload for one part in the database, so that replicas agree: the part must start
 * where the staged bytes end (or at 0, which starts over), and no other part may be in flight.
 */
async function claim(deps: SubmissionDeps, id: string, offset: number): Promise<void> {
  const db = deps.database.db;
  const now = deps.clock.now();
  await db.insert(submissionUploads).values({ submissionId: id, received: 0, updatedAt: now }).onConflictDoNothing();
  const [claimed] = await db
    .update(submissionUploads)
    .set({ busyUntil: new Date(now.getTime() + CLAIM_MS), updatedAt: now })
    .where(
      and(
        eq(submissionUploads.submissionId, id),
        or(isNull(submissionUploads.busyUntil), lt(submissionUploads.busyUntil, now)),
        offset === 0 ? undefined : eq(submissionUploads.received, offset),
      ),
    )
    .returning();
  if (claimed) return;
  const [current] = await db.select().from(submissionUploads).where(eq(submissionUploads.submissionId, id));
  if (current && current.busyUntil && current.busyUntil >= now) {
    throw new DomainError('upload_busy', 'Another part of this upload is being written; ask where it stands and retry.');
  }
  throw new DomainError('upload_offset_mismatch', `The next part starts at ${current?.received ?? 0}.`, {
    uploadOffset: current?.received ?? 0,
  });
}

async function release(deps: SubmissionDeps, id: string, received: number): Promise<void> {
  await deps.database.db
    .update(submissionUploads)
    .set({ received, busyUntil: null, updatedAt: deps.clock.now() })
    .where(eq(submissionUploads.submissionId, id));
}

/** Stages one part at `offset` (the part and whole-context limits apply), answering the progress. */
export async function putPart(deps: SubmissionDeps, userId: string, id: string, offset: number, part: IncomingPart): Promise<UploadProgress> {
  const row = await pendingOwn(deps, userId, id);
  const store = requireStore(deps);
  const limits = await readUploadLimits(deps.database.db);
  const maxBytes = partRoom(limits, offset);
  if (maxBytes < 0) throw tooLarge(limits, offset);
  await claim(deps, row.id, offset);
  let received = offset;
  try {
    received = await store.stagePart(row.id, part, { offset, maxBytes });
  } catch (err) {
    throw partError(err, limits, offset);
  } finally {
    await release(deps, row.id, received);
  }
  return { received, part_max_bytes: limits.partMaxBytes, max_context_bytes: limits.contextMaxBytes };
}

/** Stores the staged bytes as the submission's context, with their sha-256. */
export async function completeUpload(deps: SubmissionDeps, userId: string, id: string): Promise<SubmissionView> {
  const row = await pendingOwn(deps, userId, id);
  const store = requireStore(deps);
  const db = deps.database.db;
  const [upload] = await db.select().from(submissionUploads).where(eq(submissionUploads.submissionId, row.id));
  if (!upload || upload.received === 0) throw new DomainError('bad_request', 'Nothing is staged for this submission.');
  await claim(deps, row.id, upload.received);
  let stored: { sha256: string; size: number };
  try {
    stored = await store.commit(row.id);
  } catch (err) {
    await release(deps, row.id, upload.received);
    throw err;
  }
  await db.delete(submissionUploads).where(eq(submissionUploads.submissionId, row.id));
  return recordContext(deps, row.id, stored);
}

/** The whole context in one request: staged from 0 under the whole-context limit, then stored. */
export async function uploadWhole(deps: SubmissionDeps, userId: string, id: string, part: IncomingPart): Promise<SubmissionView> {
  const row = await pendingOwn(deps, userId, id);
  const store = requireStore(deps);
  const limits = await readUploadLimits(deps.database.db);
  await claim(deps, row.id, 0);
  let received = 0;
  try {
    received = await store.stagePart(row.id, part, { offset: 0, maxBytes: limits.contextMaxBytes });
    if (received === 0) throw new DomainError('bad_request', 'The context is empty.');
    const stored = await store.commit(row.id);
    await deps.database.db.delete(submissionUploads).where(eq(submissionUploads.submissionId, row.id));
    return await recordContext(deps, row.id, stored);
  } catch (err) {
    await release(deps, row.id, 0);
    throw partError(err, { ...limits, partMaxBytes: limits.contextMaxBytes }, 0);
  }
}

async function recordContext(deps: SubmissionDeps, id: string, stored: { sha256: string; size: number }): Promise<SubmissionView> {
  const [row] = await deps.database.db
    .update(submissions)
    .set({ contextSha256: stored.sha256, contextBytes: stored.size })
    .where(and(eq(submissions.id, id), eq(submissions.status, 'pending_review')))
    .returning();
  if (!row) throw new DomainError('conflict', 'The submission was reviewed or withdrawn meanwhile.');
  await raiseEvent(deps.database.db, {
    type: 'submission.pending_review',
    at: deps.clock.now(),
    key: `submission.pending_review:${id}:${stored.sha256}`,
    summary: `The modpack "${row.displayName}" is uploaded and waits for review.`,
    subject: { kind: 'submission', id },
    data: { display_name: row.displayName, submitted_by: row.submittedBy, context_bytes: stored.size },
  });
  return toSubmissionView(row);
}

function tooLarge(limits: UploadLimits, offset: number): DomainError {
  return new DomainError(
    'too_large',
    `A part carries at most ${limits.partMaxBytes} bytes and the context at most ${limits.contextMaxBytes} (this part starts at ${offset}).`,
  );
}

function partError(err: unknown, limits: UploadLimits, offset: number): unknown {
  if (!(err instanceof StagePartError)) return err;
  switch (err.reason) {
    case 'too_large':
      return tooLarge(limits, offset);
    case 'store_full':
      return new DomainError('uploads_full', err.message);
  }
}
