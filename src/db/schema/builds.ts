import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const BUILD_STATUSES = ['pending', 'building', 'succeeded', 'failed', 'cancelled'] as const;
export type BuildStatus = (typeof BUILD_STATUSES)[number];

/** Image builds: a Dockerfile and optionally an approved submission's context, run as a job. */
export const builds = pgTable(
  'builds',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    imageRef: text('image_ref').notNull(),
    status: text('status').$type<BuildStatus>().notNull(),
    requestedBy: text('requested_by').notNull(),
    dockerfile: text('dockerfile'),
    /** The submission whose stored context the build reads (never a storage path). */
    contextRef: text('context_ref'),
    contextDigest: text('context_digest'),
    baseImage: text('base_image'),
    jobName: text('job_name'),
    logRef: text('log_ref'),
    error: text('error'),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
    finishedAt: at('finished_at'),
  },
  (t) => [index('builds_created_at_idx').on(t.createdAt)],
);

/** The scan gate's verdict on one build, with the scanner's documents unless too large. */
export const buildScans = pgTable('build_scans', {
  buildId: uuid('build_id')
    .primaryKey()
    .references(() => builds.id, { onDelete: 'cascade' }),
  scannedAt: at('scanned_at').notNull(),
  summary: jsonb('summary').$type<unknown>().notNull(),
  report: jsonb('report').$type<unknown>(),
  sbom: jsonb('sbom').$type<unknown>(),
});

/** The build's log lines, in order: what the log stream replays and follows on any replica. */
export const buildLogLines = pgTable(
  'build_log_lines',
  {
    buildId: uuid('build_id')
      .notNull()
      .references(() => builds.id, { onDelete: 'cascade' }),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    at: at('at').notNull(),
    line: text('line').notNull(),
  },
  (t) => [index('build_log_lines_build_seq_idx').on(t.buildId, t.seq)],
);

/**
 * How far each step of a build's Job pod has been copied into `build_log_lines` (Kubernetes): the
 * count of the step's lines stored, moved in the same transaction as the lines and only from the
 * count the copier read, so a line is stored once even when two replicas copy at the same time.
 */
export const buildLogSources = pgTable(
  'build_log_sources',
  {
    buildId: uuid('build_id')
      .notNull()
      .references(() => builds.id, { onDelete: 'cascade' }),
    /** The container (the build's step) the lines come from. */
    source: text('source').notNull(),
    lines: integer('lines').notNull().default(0),
    /** The container ended and its whole log is stored. */
    done: boolean('done').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.buildId, t.source] })],
);
