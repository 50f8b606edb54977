import { z } from '@hono/zod-openapi';
import { BUILD_STATUSES } from '../../../db/schema/builds.js';
import { PageQuery, SearchTerm } from '../../../http/paging.js';
import { DateTime, Sha256Hex } from '../schema.js';

export const SUBMISSION_STATUSES = ['pending_review', 'approved', 'rejected'] as const;

export const SubmissionSchema = z
  .object({
    id: z.string(),
    submitted_by: z.string(),
    display_name: z.string(),
    context_ref: z.string(),
    status: z.enum(SUBMISSION_STATUSES),
    created_at: DateTime,
    context_sha256: Sha256Hex.optional(),
    image_ref: z.string().optional(),
    build_id: z.string().optional(),
    build_status: z.enum(BUILD_STATUSES).optional(),
    build_error: z.string().optional(),
    reviewed_by: z.string().optional(),
    reject_reason: z.string().optional(),
    reviewed_at: DateTime.optional(),
  })
  .openapi('Submission');
export type SubmissionView = z.infer<typeof SubmissionSchema>;

export const SubmissionPageSchema = z
  .object({
    submissions: z.array(SubmissionSchema),
    total: z.number().int(),
    counts: z.object({ pending_review: z.number().int(), approved: z.number().int(), rejected: z.number().int() }),
  })
  .openapi('SubmissionPage');

export const ContextUploadProgressSchema = z
  .object({ received: z.number().int(), part_max_bytes: z.number().int(), max_context_bytes: z.number().int() })
  .openapi('ContextUploadProgress');

/** Printable text without control characters (it is shown to staff and written to logs). */
const Printable = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .regex(/^[^\x00-\x1f\x7f]+$/, 'no control characters');

export const CreateSubmissionBody = z.strictObject({ display_name: Printable(100) }).openapi('CreateSubmission');
export const ApproveSubmissionBody = z.strictObject({ expected_digest: Sha256Hex }).openapi('ApproveSubmission');
export const RejectSubmissionBody = z.strictObject({ reason: Printable(1000) }).openapi('RejectSubmission');

export const SubmissionListQuery = z.strictObject({ status: z.enum(SUBMISSION_STATUSES).optional(), query: SearchTerm, ...PageQuery });
export const SubmissionIdParam = z.object({ id: z.string().min(1).max(64).openapi({ param: { name: 'id', in: 'path' } }) });
export const UploadOffsetQuery = z.strictObject({ offset: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER) });
