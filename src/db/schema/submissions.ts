import { bigint, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export type SubmissionStatus = 'pending_review' | 'approved' | 'rejected';

/** User-submitted modpacks in the approval lane. */
export const submissions = pgTable(
  'submissions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    submittedBy: uuid('submitted_by').notNull(),
    displayName: text('display_name').notNull(),
    status: text('status').$type<SubmissionStatus>().notNull(),
    contextSha256: text('context_sha256'),
    contextBytes: bigint('context_bytes', { mode: 'number' }),
    imageRef: text('image_ref'),
    buildId: uuid('build_id'),
    reviewedBy: text('reviewed_by'),
    rejectReason: text('reject_reason'),
    reviewedAt: at('reviewed_at'),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('submissions_submitted_by_idx').on(t.submittedBy, t.createdAt), index('submissions_created_at_idx').on(t.createdAt)],
);

/** A context upload in parts: the bytes staged so far (the next part must start here). */
export const submissionUploads = pgTable('submission_uploads', {
  submissionId: uuid('submission_id')
    .primaryKey()
    .references(() => submissions.id, { onDelete: 'cascade' }),
  received: bigint('received', { mode: 'number' }).notNull(),
  /** While a part is being written: no other part may start before this (a crashed writer's claim lapses). */
  busyUntil: at('busy_until'),
  updatedAt: at('updated_at').notNull(),
});
