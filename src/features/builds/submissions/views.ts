import type { builds } from '../../../db/schema/builds.js';
import type { submissions } from '../../../db/schema/submissions.js';
import type { SubmissionView } from './schema.js';

/** The context_ref of a submission: platform-derived, what a build's `context_ref` names. */
export const contextRefOf = (id: string) => `submissions/${id}`;

/** The submission id a context_ref names, or undefined. */
export function submissionIdOf(contextRef: string): string | undefined {
  const match = /^submissions\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(contextRef);
  return match?.[1];
}

type BuildState = Pick<typeof builds.$inferSelect, 'status' | 'error'>;

export function toSubmissionView(row: typeof submissions.$inferSelect, build?: BuildState): SubmissionView {
  const view: SubmissionView = {
    id: row.id,
    submitted_by: row.submittedBy,
    display_name: row.displayName,
    context_ref: contextRefOf(row.id),
    status: row.status,
    created_at: row.createdAt.toISOString(),
  };
  if (row.contextSha256 !== null) view.context_sha256 = row.contextSha256;
  if (row.imageRef !== null) view.image_ref = row.imageRef;
  if (row.buildId !== null) view.build_id = row.buildId;
  if (build) {
    view.build_status = build.status;
    if (build.error !== null) view.build_error = build.error;
  }
  if (row.reviewedBy !== null) view.reviewed_by = row.reviewedBy;
  if (row.rejectReason !== null) view.reject_reason = row.rejectReason;
  if (row.reviewedAt !== null) view.reviewed_at = row.reviewedAt.toISOString();
  return view;
}
