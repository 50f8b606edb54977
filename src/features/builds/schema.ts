import { z } from '@hono/zod-openapi';
import { PageQuery, SearchTerm } from '../../http/paging.js';
import { SEVERITIES } from './scan-gate.js';
import { BUILD_STATUSES } from '../../db/schema/builds.js';

export const DateTime = z.string().openapi({ format: 'date-time' });
/** A sha-256 in lowercase hex: a context's digest, as stored, pinned and named on approval. */
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'lowercase hex sha-256');

export const BuildSchema = z
  .object({
    id: z.string(),
    image_ref: z.string(),
    status: z.enum(BUILD_STATUSES),
    requested_by: z.string(),
    created_at: DateTime,
    dockerfile: z.string().optional(),
    context_ref: z.string().optional(),
    context_digest: Sha256Hex.optional(),
    base_image: z.string().optional(),
    job_name: z.string().optional(),
    log_ref: z.string().optional(),
    error: z.string().optional(),
    finished_at: DateTime.optional(),
  })
  .openapi('Build');
export type BuildView = z.infer<typeof BuildSchema>;

const Severity = z.enum(SEVERITIES);
const Counts = z.partialRecord(Severity, z.number().int());

export const ScanPolicySchema = z
  .object({ fail_on: z.array(Severity), fail_unfixed: z.boolean(), accept: z.array(z.string()).optional() })
  .openapi('ScanPolicy');

export const ScanFindingSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['vulnerability', 'secret']),
    severity: Severity,
    target: z.string(),
    blocking: z.boolean(),
    package: z.string().optional(),
    installed: z.string().optional(),
    fixed: z.string().optional(),
    title: z.string().optional(),
    accepted: z.boolean().optional(),
  })
  .openapi('ScanFinding');

export const ScanSummarySchema = z
  .object({
    policy: ScanPolicySchema,
    blocked: z.boolean(),
    packages: z.number().int(),
    counts: Counts,
    blocking_counts: Counts,
    findings: z.array(ScanFindingSchema).max(100),
    omitted: z.array(z.enum(['report', 'sbom'])).optional(),
  })
  .openapi('ScanSummary');

export const BuildScanSchema = z
  .object({ build_id: z.string(), scanned_at: DateTime, summary: ScanSummarySchema, has_report: z.boolean(), has_sbom: z.boolean() })
  .openapi('BuildScan');

/** An image reference as typed: printable, no white space (it reaches a job spec). */
const ImageRefText = z.string().min(1).max(512).regex(/^[^\s\x00-\x1f\x7f]+$/);

export const CreateBuildBody = z
  .strictObject({
    image_ref: ImageRefText,
    dockerfile: z.string().min(1).max(64 * 1024).optional(),
    context_ref: z.string().min(1).max(128).optional(),
    base_image: ImageRefText.optional(),
  })
  .openapi('CreateBuild');

export const BuildListQuery = z.strictObject({ query: SearchTerm, ...PageQuery });
export const BuildListSchema = z.object({ builds: z.array(BuildSchema), total: z.number().int() }).openapi('BuildPage');

export const BuildIdParam = z.object({ id: z.string().min(1).max(64).openapi({ param: { name: 'id', in: 'path' } }) });

export const BuildStatusBody = z
  .strictObject({
    status: z.enum(['building', 'succeeded', 'failed']),
    error: z.string().max(4096).optional(),
    log_ref: z.string().max(512).optional(),
  })
  .openapi('BuildStatusReport');

export const ScanUploadBody = z
  .strictObject({ report: z.record(z.string(), z.unknown()), sbom: z.record(z.string(), z.unknown()).optional() })
  .openapi('BuildScanUpload');
