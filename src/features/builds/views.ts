import type { builds, buildScans } from '../../db/schema/builds.js';
import type { ScanSummary } from './scan-gate.js';
import type { BuildView } from './schema.js';

export type { BuildView } from './schema.js';

export interface BuildScanView {
  build_id: string;
  scanned_at: string;
  summary: ScanSummary;
  has_report: boolean;
  has_sbom: boolean;
}

export function toBuildView(row: typeof builds.$inferSelect): BuildView {
  const view: BuildView = {
    id: row.id,
    image_ref: row.imageRef,
    status: row.status,
    requested_by: row.requestedBy,
    created_at: row.createdAt.toISOString(),
  };
  if (row.dockerfile !== null) view.dockerfile = row.dockerfile;
  if (row.contextRef !== null) view.context_ref = row.contextRef;
  if (row.contextDigest !== null) view.context_digest = row.contextDigest;
  if (row.baseImage !== null) view.base_image = row.baseImage;
  if (row.jobName !== null) view.job_name = row.jobName;
  if (row.logRef !== null) view.log_ref = row.logRef;
  if (row.error !== null) view.error = row.error;
  if (row.finishedAt !== null) view.finished_at = row.finishedAt.toISOString();
  return view;
}

export function toBuildScanView(row: typeof buildScans.$inferSelect): BuildScanView {
  return {
    build_id: row.buildId,
    scanned_at: row.scannedAt.toISOString(),
    summary: row.summary as ScanSummary,
    has_report: row.report !== null,
    has_sbom: row.sbom !== null,
  };
}
