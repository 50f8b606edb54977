import { and, count, desc, eq, ilike, inArray, or, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { buildLogLines, builds, buildScans, type BuildStatus } from '../../db/schema/builds.js';
import { submissions } from '../../db/schema/submissions.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { canonicalImageRef, recordBuiltImage } from '../images/index.js';
import { submissionIdOf } from './submissions/views.js';
import { integerSetting } from '../servers/index.js';
import { containsPattern } from '../../db/like.js';
import type { BuildJob } from '../../adapters/cluster/build-jobs.js';
import type { BuildReporter, BuildRunner } from './runner.js';
import type { BuildScanView, BuildView } from './views.js';
import { toBuildScanView, toBuildView } from './views.js';
import { blockedReason, evaluateScan, ScanReportError, type ScanSummary } from './scan-gate.js';
import { readScanPolicy } from './scan-policy.js';
import { canMove, isTerminal, sourcesOf } from './states.js';
import { isUuid } from '../../lib/uuid.js';
import { raiseEvent } from '../notifications/index.js';
import type { BuildsParts } from './runner.js';

type BuildRow = typeof builds.$inferSelect;
export type BuildDeps = Pick<Deps & BuildsParts, 'database' | 'clock' | 'log' | 'buildRunner' | 'contextStore'>;

/** Largest scanner documents kept with a scan (report and SBOM together); beyond it they are omitted. */
export const SCAN_KEEP_SETTING = { key: 'scan_keep_max_bytes', fallback: 8 * 1024 * 1024 };

export interface CreateBuildInput {
  imageRef: string;
  requestedBy: string;
  dockerfile?: string;
  contextRef?: string;
  baseImage?: string;
}

export async function findBuild(db: Queryable, id: string): Promise<BuildRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db.select().from(builds).where(eq(builds.id, id));
  return row;
}

/** The build; 404 when there is none. */
async function requireBuild(db: Queryable, id: string): Promise<BuildRow> {
  const row = await findBuild(db, id);
  if (!row) throw new DomainError('not_found', 'No such build.');
  return row;
}

export async function getBuild(db: Queryable, id: string): Promise<BuildView> {
  return toBuildView(await requireBuild(db, id));
}

/** The runner builds are handed to; 503 when none is configured. */
function requireRunner(deps: Pick<Deps & BuildsParts, 'buildRunner'>): BuildRunner {
  if (!deps.buildRunner) throw new DomainError('unavailable', 'No image builder is configured.');
  return deps.buildRunner;
}

/**
 * Records a pending build. A `context_ref` must name an approved submission with a stored
 * context; the build is pinned to that context's digest.
 */
export async function insertBuild(deps: Pick<Deps, 'clock'>, db: Queryable, input: CreateBuildInput): Promise<BuildRow> {
  const { text: imageRef } = canonicalImageRef(input.imageRef);
  const baseImage = input.baseImage === undefined ? null : canonicalImageRef(input.baseImage).text;
  let contextDigest: string | null = null;
  if (input.contextRef !== undefined) {
    const submissionId = submissionIdOf(input.contextRef);
    const [submission] = submissionId ? await db.select().from(submissions).where(eq(submissions.id, submissionId)) : [];
    if (!submission || submission.status !== 'approved' || !submission.contextSha256) {
      throw new DomainError('bad_request', 'context_ref names no approved submission with a stored context.');
    }
    contextDigest = submission.contextSha256;
  } else if (input.dockerfile === undefined) {
    throw new DomainError('bad_request', 'A build needs a dockerfile or a context_ref.');
  }
  const now = deps.clock.now();
  const [row] = await db
    .insert(builds)
    .values({
      imageRef,
      status: 'pending',
      requestedBy: input.requestedBy,
      dockerfile: input.dockerfile ?? null,
      contextRef: input.contextRef ?? null,
      contextDigest,
      baseImage,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return row!;
}

/**
 * Hands a pending build to the runner. Resolves with the build once its job exists; when the
 * runner refuses, the build is failed with the reason and the error is thrown.
 */
export async function handOff(deps: BuildDeps, row: BuildRow): Promise<BuildRow> {
  const runner = requireRunner(deps);
  const job: BuildJob = { buildId: row.id, imageRef: row.imageRef };
  if (row.dockerfile) job.dockerfile = row.dockerfile;
  if (row.contextRef) job.contextRef = row.contextRef;
  if (row.contextDigest) job.contextDigest = row.contextDigest;
  if (row.baseImage) job.baseImage = row.baseImage;
  try {
    const { jobName } = await runner.start(job, reporterFor(deps, row.id));
    const [updated] = await deps.database.db.update(builds).set({ jobName }).where(eq(builds.id, row.id)).returning();
    return updated ?? row;
  } catch (err) {
    deps.log.error({ err, buildId: row.id }, 'build hand-off failed');
    await moveBuild(deps, row.id, 'failed', { error: 'the build could not be handed to the builder' }).catch(() => undefined);
    throw new DomainError('unavailable', 'The image builder did not take the build.', { cause: err });
  }
}

export async function createBuild(deps: BuildDeps, input: CreateBuildInput): Promise<BuildView> {
  // Refused before the build is recorded.
  requireRunner(deps);
  const row = await insertBuild(deps, deps.database.db, input);
  return toBuildView(await handOff(deps, row));
}

export async function listBuilds(
  db: Queryable,
  page: { query?: string; limit: number; offset: number },
): Promise<{ builds: BuildView[]; total: number }> {
  const where = page.query
    ? or(ilike(builds.imageRef, containsPattern(page.query)), sql`${builds.id}::text = ${page.query}`)
    : undefined;
  const [rows, [{ total } = { total: 0 }]] = await Promise.all([
    db.select().from(builds).where(where).orderBy(desc(builds.createdAt), desc(builds.id)).limit(page.limit).offset(page.offset),
    db.select({ total: count() }).from(builds).where(where),
  ]);
  return { builds: rows.map(toBuildView), total };
}

/**
 * Moves a build along one legal edge, atomically (the update is guarded by the statuses the move
 * may start from). 404 when missing, 409 for an illegal move. A terminal status sets finished_at;
 * a build that succeeds whitelists its image, in the same transaction.
 */
export async function moveBuild(
  deps: Pick<Deps, 'database' | 'clock'>,
  id: string,
  to: BuildStatus,
  details: { error?: string; logRef?: string } = {},
): Promise<BuildRow> {
  return deps.database.db.transaction(async (tx) => {
    const current = await requireBuild(tx, id);
    if (!canMove(current.status, to)) {
      throw new DomainError('conflict', `A ${current.status} build cannot become ${to}.`);
    }
    if (to === 'succeeded') await requireUnblockedScan(tx, id);
    const now = deps.clock.now();
    const [row] = await tx
      .update(builds)
      .set({
        status: to,
        updatedAt: now,
        ...(isTerminal(to) ? { finishedAt: now } : {}),
        ...(details.error !== undefined ? { error: details.error } : {}),
        ...(details.logRef !== undefined ? { logRef: details.logRef } : {}),
      })
      .where(and(eq(builds.id, id), inArray(builds.status, sourcesOf(to))))
      .returning();
    if (!row) throw new DomainError('conflict', 'The build moved meanwhile.');
    if (to === 'succeeded') {
      await recordBuiltImage(tx, { imageRef: row.imageRef, addedBy: row.requestedBy, buildId: row.id, at: now });
    }
    return row;
  });
}

/** Only a scanned, unblocked image may be pushed, so only such a build may succeed. */
async function requireUnblockedScan(db: Queryable, id: string): Promise<void> {
  const [scan] = await db.select({ summary: buildScans.summary }).from(buildScans).where(eq(buildScans.buildId, id));
  if (!scan) throw new DomainError('conflict', 'The build has no scan: the image must pass the scan gate before it is pushed.');
  if ((scan.summary as ScanSummary).blocked) throw new DomainError('conflict', 'The scan blocked this image.');
}

/** Cancels a pending or building build (409 once terminal) and stops its job. */
export async function cancelBuild(deps: BuildDeps, id: string): Promise<BuildView> {
  const row = await moveBuild(deps, id, 'cancelled');
  if (row.jobName && deps.buildRunner) {
    await deps.buildRunner.cancel(row.jobName).catch((err: unknown) => deps.log.warn({ err, buildId: id }, 'build job cancel failed'));
  }
  return toBuildView(row);
}

/**
 * The scan gate of a building build: the verdict under the policy in force, kept once. A blocked
 * image fails the build here, before any push; the documents are kept unless too large.
 */
export async function recordScan(
  deps: Pick<Deps, 'database' | 'clock'>,
  id: string,
  documents: { report: unknown; sbom?: unknown },
): Promise<ScanSummary> {
  const db = deps.database.db;
  const build = await requireBuild(db, id);
  if (build.status !== 'building') throw new DomainError('conflict', `A ${build.status} build takes no scan.`);
  let summary: ScanSummary;
  try {
    summary = evaluateScan(documents.report, await readScanPolicy(db));
  } catch (err) {
    if (err instanceof ScanReportError) throw new DomainError('bad_request', err.message);
    throw err;
  }
  const kept = await keepDocuments(db, documents);
  if (kept.omitted.length > 0) summary.omitted = kept.omitted;
  const [inserted] = await db
    .insert(buildScans)
    .values({ buildId: id, scannedAt: deps.clock.now(), summary, report: kept.report, sbom: kept.sbom })
    .onConflictDoNothing()
    .returning({ buildId: buildScans.buildId });
  if (!inserted) throw new DomainError('conflict', 'This build was already scanned.');
  if (summary.blocked) {
    const reason = blockedReason(summary)!;
    await moveBuild(deps, id, 'failed', { error: reason });
    await raiseEvent(db, {
      type: 'build.blocked',
      at: deps.clock.now(),
      key: `build.blocked:${id}`,
      summary: `The scan gate blocked the build of ${build.imageRef}: ${reason}`,
      subject: { kind: 'build', id },
      data: { image_ref: build.imageRef, blocking_counts: summary.blocking_counts },
    });
  }
  return summary;
}

/** Drops the SBOM, then the report, until what is kept fits the setting. */
async function keepDocuments(db: Queryable, documents: { report: unknown; sbom?: unknown }) {
  const limit = await integerSetting(db, SCAN_KEEP_SETTING);
  const size = (value: unknown) => (value === undefined || value === null ? 0 : Buffer.byteLength(JSON.stringify(value)));
  let report: unknown = documents.report;
  let sbom: unknown = documents.sbom ?? null;
  const omitted: Array<'report' | 'sbom'> = [];
  if (size(report) + size(sbom) > limit && sbom !== null) {
    sbom = null;
    omitted.push('sbom');
  }
  if (size(report) + size(sbom) > limit) {
    report = null;
    omitted.push('report');
  }
  return { report, sbom, omitted };
}

async function findScan(db: Queryable, id: string) {
  return isUuid(id) ? (await db.select().from(buildScans).where(eq(buildScans.buildId, id)))[0] : undefined;
}

export async function getScan(db: Queryable, id: string): Promise<BuildScanView> {
  const row = await findScan(db, id);
  if (!row) throw new DomainError('not_found', 'This build has no scan.');
  return toBuildScanView(row);
}

/** The kept scanner report or SBOM (JSON objects, as uploaded); 404 when the build was not scanned or the document omitted. */
export async function getScanDocument(db: Queryable, id: string, which: 'report' | 'sbom'): Promise<Record<string, unknown>> {
  const document = (await findScan(db, id))?.[which];
  if (document === undefined || document === null) throw new DomainError('not_found', `This build has no kept ${which === 'report' ? 'scan report' : 'SBOM'}.`);
  return document as Record<string, unknown>;
}

export async function appendBuildLog(deps: Pick<Deps, 'database' | 'clock'>, id: string, lines: string[]): Promise<void> {
  const at = deps.clock.now();
  const rows = buildLogRows(id, lines.map((line) => ({ at, line })));
  if (rows.length > 0) await deps.database.db.insert(buildLogLines).values(rows);
}

/**
 * Stored rows of log lines: one stored line is one stream event, so line breaks split it (each
 * part keeps the `prefix`); 16 KiB at most.
 */
export function buildLogRows(buildId: string, lines: Array<{ at: Date; line: string }>, prefix = ''): Array<typeof buildLogLines.$inferInsert> {
  return lines.flatMap(({ at, line }) => line.split(/\r\n|\r|\n/).map((part) => ({ buildId, at, line: `${prefix}${part}`.slice(0, 16 * 1024) })));
}

/** The in-process job's way back: the same service steps as the internal routes. */
function reporterFor(deps: BuildDeps, id: string): BuildReporter {
  return {
    status: async (status, error) => {
      await moveBuild(deps, id, status, error === undefined ? {} : { error });
    },
    scan: (report, sbom) => recordScan(deps, id, { report, sbom }),
    log: (lines) => appendBuildLog(deps, id, lines),
    context: async () => {
      const build = await findBuild(deps.database.db, id);
      const submissionId = build?.contextRef ? submissionIdOf(build.contextRef) : undefined;
      const stream = submissionId ? await deps.contextStore?.open(submissionId) : undefined;
      if (!stream) throw new Error('this build has no stored context');
      return stream;
    },
  };
}

