import { and, count, desc, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import type { Readable } from 'node:stream';
import type { Queryable } from '../../../db/client.js';
import { builds } from '../../../db/schema/builds.js';
import { submissions, type SubmissionStatus } from '../../../db/schema/submissions.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { containsPattern } from '../../../db/like.js';
import { getBuild, handOff, insertBuild } from '../service.js';
import { SUBMISSION_STATUSES, type SubmissionView } from './schema.js';
import { contextRefOf, submissionIdOf, toSubmissionView } from './views.js';
import { isUuid } from '../../../lib/uuid.js';
import type { BuildsParts } from '../runner.js';

type SubmissionRow = typeof submissions.$inferSelect;
export type SubmissionDeps = Pick<Deps & BuildsParts, 'database' | 'clock' | 'log' | 'registry' | 'buildRunner' | 'contextStore'>;

/** Who asks: a submitter sees only their own; staff (`all`) see every user's. */
export type Scope = { userId: string } | 'all';

export async function createSubmission(deps: Pick<Deps, 'database' | 'clock'>, userId: string, displayName: string): Promise<SubmissionView> {
  const [row] = await deps.database.db
    .insert(submissions)
    .values({ submittedBy: userId, displayName, status: 'pending_review', createdAt: deps.clock.now() })
    .returning();
  return toSubmissionView(row!);
}

/** The submission, when the scope may see it; 404 otherwise (another user's is not revealed). */
export async function findSubmission(db: Queryable, scope: Scope, id: string): Promise<SubmissionRow> {
  const [row] = isUuid(id) ? await db.select().from(submissions).where(eq(submissions.id, id)) : [];
  if (!row || (scope !== 'all' && row.submittedBy !== scope.userId)) throw new DomainError('not_found', 'No such submission.');
  return row;
}

export async function readSubmission(db: Queryable, scope: Scope, id: string): Promise<SubmissionView> {
  const row = await findSubmission(db, scope, id);
  return toSubmissionView(row, await buildStateOf(db, row.buildId));
}

async function buildStateOf(db: Queryable, buildId: string | null) {
  if (!buildId) return undefined;
  const [build] = await db.select({ status: builds.status, error: builds.error }).from(builds).where(eq(builds.id, buildId));
  return build;
}

export interface SubmissionPage {
  submissions: SubmissionView[];
  total: number;
  counts: Record<SubmissionStatus, number>;
}

/** One page, newest first, with build_status attached; counts per status ignore the status filter. */
export async function listSubmissions(
  db: Queryable,
  scope: Scope,
  filter: { status?: SubmissionStatus; query?: string; limit: number; offset: number },
): Promise<SubmissionPage> {
  const base: SQL[] = [];
  if (scope !== 'all') base.push(eq(submissions.submittedBy, scope.userId));
  if (filter.query) {
    const term = filter.query;
    base.push(or(ilike(submissions.displayName, containsPattern(term)), sql`${submissions.id}::text = ${term}`)!);
  }
  const where = and(...base, ...(filter.status ? [eq(submissions.status, filter.status)] : []));
  const [rows, countRows] = await Promise.all([
    db
      .select({ submission: submissions, buildStatus: builds.status, buildError: builds.error })
      .from(submissions)
      .leftJoin(builds, eq(builds.id, submissions.buildId))
      .where(where)
      .orderBy(desc(submissions.createdAt), desc(submissions.id))
      .limit(filter.limit)
      .offset(filter.offset),
    db.select({ status: submissions.status, n: count() }).from(submissions).where(and(...base)).groupBy(submissions.status),
  ]);
  const counts = Object.fromEntries(SUBMISSION_STATUSES.map((s) => [s, 0])) as Record<SubmissionStatus, number>;
  for (const { status, n } of countRows) counts[status] = n;
  return {
    submissions: rows.map((r) =>
      toSubmissionView(r.submission, r.buildStatus ? { status: r.buildStatus, error: r.buildError } : undefined),
    ),
    total: filter.status ? counts[filter.status] : Object.values(counts).reduce((a, b) => a + b, 0),
    counts,
  };
}

/** Deletes a submission and its context; a submitter may only withdraw one still pending review. */
export async function deleteSubmission(deps: SubmissionDeps, scope: Scope, id: string): Promise<SubmissionView> {
  const row = await findSubmission(deps.database.db, scope, id);
  const guard = scope === 'all' ? undefined : eq(submissions.status, 'pending_review');
  const [deleted] = await deps.database.db
    .delete(submissions)
    .where(and(eq(submissions.id, row.id), guard))
    .returning();
  if (!deleted) throw new DomainError('conflict', 'A reviewed submission can no longer be withdrawn.');
  await deps.contextStore?.remove(row.id).catch((err: unknown) => deps.log.warn({ err, submissionId: id }, 'context removal failed'));
  return toSubmissionView(deleted);
}

/** The image a submission builds to: derived by the platform, never from user text. */
export function imageRefFor(deps: Pick<Deps, 'registry'>, row: SubmissionRow, sha256: string): string {
  const host = deps.registry.host ?? 'registry.felis.local';
  return `${host}/felis/modpacks/sub-${row.id.slice(0, 8)}:${sha256.slice(0, 12)}`;
}

/**
 * Approves a pending submission whose stored context has the named digest (409 otherwise), derives
 * its image, and hands a build off; `build_id` is recorded only once the hand-off succeeded.
 */
export async function approveSubmission(
  deps: SubmissionDeps,
  reviewer: string,
  id: string,
  expectedDigest: string,
): Promise<SubmissionView> {
  const db = deps.database.db;
  const current = await findSubmission(db, 'all', id);
  if (current.status !== 'pending_review') throw new DomainError('conflict', `The submission is already ${current.status}.`);
  if (!current.contextSha256) throw new DomainError('conflict', 'The submission has no uploaded context yet.');
  if (current.contextSha256 !== expectedDigest) {
    throw new DomainError('conflict', 'expected_digest does not match the stored context.');
  }
  const now = deps.clock.now();
  const { approved, build } = await db.transaction(async (tx) => {
    const [approved] = await tx
      .update(submissions)
      .set({ status: 'approved', imageRef: imageRefFor(deps, current, expectedDigest), reviewedBy: reviewer, reviewedAt: now })
      .where(and(eq(submissions.id, id), eq(submissions.status, 'pending_review'), eq(submissions.contextSha256, expectedDigest)))
      .returning();
    if (!approved) throw new DomainError('conflict', 'The submission changed meanwhile.');
    const build = await insertBuild(deps, tx, { imageRef: approved.imageRef!, requestedBy: reviewer, contextRef: contextRefOf(id) });
    return { approved, build };
  });
  try {
    const started = await handOff(deps, build);
    const [linked] = await db.update(submissions).set({ buildId: started.id }).where(eq(submissions.id, id)).returning();
    return toSubmissionView(linked ?? approved, { status: started.status, error: started.error });
  } catch (err) {
    deps.log.warn({ err, submissionId: id, buildId: build.id }, 'approved, but the build hand-off failed');
    return toSubmissionView(approved);
  }
}

export async function rejectSubmission(deps: SubmissionDeps, reviewer: string, id: string, reason: string): Promise<SubmissionView> {
  await findSubmission(deps.database.db, 'all', id);
  const [row] = await deps.database.db
    .update(submissions)
    .set({ status: 'rejected', rejectReason: reason, reviewedBy: reviewer, reviewedAt: deps.clock.now() })
    .where(and(eq(submissions.id, id), eq(submissions.status, 'pending_review')))
    .returning();
  if (!row) throw new DomainError('conflict', 'Only a submission pending review can be rejected.');
  return toSubmissionView(row);
}

/** A stored context tarball, with its sha-256 and size. */
export interface StoredContext {
  stream: Readable;
  sha256: string;
  size: number;
}

/** The stored context tarball and its digest; 404 when none was uploaded. */
export async function openContext(deps: SubmissionDeps, scope: Scope, id: string): Promise<StoredContext> {
  const row = await findSubmission(deps.database.db, scope, id);
  const store = requireStore(deps);
  const stream = row.contextSha256 ? await store.open(row.id) : undefined;
  if (!stream || !row.contextSha256) throw new DomainError('not_found', 'This submission has no uploaded context.');
  return { stream, sha256: row.contextSha256, size: row.contextBytes ?? 0 };
}

/**
 * The context a build is pinned to: its submission's stored context, and only while that still has
 * the digest the build was pinned to; 404 otherwise.
 */
export async function openBuildContext(deps: SubmissionDeps, buildId: string): Promise<StoredContext> {
  const build = await getBuild(deps.database.db, buildId);
  const submissionId = build.context_ref ? submissionIdOf(build.context_ref) : undefined;
  if (!submissionId) throw new DomainError('not_found', 'This build has no context.');
  const context = await openContext(deps, 'all', submissionId);
  if (context.sha256 !== build.context_digest) {
    context.stream.destroy();
    throw new DomainError('not_found', 'The stored context is no longer the one this build was pinned to.');
  }
  return context;
}

export function requireStore(deps: Pick<Deps & BuildsParts, 'contextStore'>) {
  if (!deps.contextStore) throw new DomainError('unavailable', 'The context store is not configured.');
  return deps.contextStore;
}

