import { z } from 'zod';

/** Trivy's severities, most severe first. */
export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'UNKNOWN'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Findings a summary lists; counts still cover every finding and the kept report has them all. */
export const MAX_LISTED_FINDINGS = 100;

export interface ScanPolicy {
  fail_on: Severity[];
  fail_unfixed: boolean;
  accept?: string[];
}

export interface ScanFinding {
  id: string;
  kind: 'vulnerability' | 'secret';
  severity: Severity;
  target: string;
  blocking: boolean;
  package?: string;
  installed?: string;
  fixed?: string;
  title?: string;
  accepted?: true;
}

export type SeverityCounts = Partial<Record<Severity, number>>;

export interface ScanSummary {
  policy: ScanPolicy;
  blocked: boolean;
  packages: number;
  counts: SeverityCounts;
  blocking_counts: SeverityCounts;
  findings: ScanFinding[];
  omitted?: Array<'report' | 'sbom'>;
}

/** The report is not a Trivy JSON report (schema version 2) the gate can read. */
export class ScanReportError extends Error {
  override name = 'ScanReportError';
}

const text = z.string().max(4096).optional();

// The part of Trivy's JSON report (SchemaVersion 2) the gate reads; everything else is kept as sent.
const TrivyReport = z.object({
  SchemaVersion: z.literal(2),
  Results: z
    .array(
      z.object({
        Target: z.string().max(4096),
        Packages: z.array(z.unknown()).optional(),
        Vulnerabilities: z
          .array(
            z.object({
              VulnerabilityID: z.string().min(1).max(256),
              PkgName: text,
              InstalledVersion: text,
              FixedVersion: text,
              Status: text,
              Severity: text,
              Title: text,
            }),
          )
          .nullish(),
        Secrets: z
          .array(z.object({ RuleID: z.string().min(1).max(256), Severity: text, Title: text }))
          .nullish(),
      }),
    )
    .nullish(),
});

function severityOf(value: string | undefined): Severity {
  const upper = value?.toUpperCase();
  return (SEVERITIES as readonly string[]).includes(upper ?? '') ? (upper as Severity) : 'UNKNOWN';
}

const rank = (severity: Severity) => SEVERITIES.indexOf(severity);

function compareFindings(a: ScanFinding, b: ScanFinding): number {
  if (a.blocking !== b.blocking) return a.blocking ? -1 : 1;
  return rank(a.severity) - rank(b.severity) || cmp(a.id, b.id) || cmp(a.package ?? '', b.package ?? '');
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Applies the policy to a Trivy report: a finding blocks when its severity is in `fail_on`, it is
 * fixable (a fixed release exists; a leaked secret always counts as fixable) or `fail_unfixed` is
 * on, and its id is not accepted. One blocking finding blocks the image.
 */
export function evaluateScan(report: unknown, policy: ScanPolicy): ScanSummary {
  const parsed = TrivyReport.safeParse(report);
  if (!parsed.success) {
    throw new ScanReportError(`not a Trivy JSON report (schema version 2): ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  const failOn = new Set(policy.fail_on);
  const accepted = new Set(policy.accept ?? []);
  const verdict = (id: string, severity: Severity, fixable: boolean) => {
    const isAccepted = accepted.has(id);
    return { blocking: !isAccepted && failOn.has(severity) && (fixable || policy.fail_unfixed), accepted: isAccepted };
  };

  const findings: ScanFinding[] = [];
  let packages = 0;
  for (const result of parsed.data.Results ?? []) {
    packages += result.Packages?.length ?? 0;
    for (const v of result.Vulnerabilities ?? []) {
      const severity = severityOf(v.Severity);
      const fixed = v.FixedVersion || undefined;
      const { blocking, accepted: isAccepted } = verdict(v.VulnerabilityID, severity, fixed !== undefined || v.Status === 'fixed');
      findings.push(
        withOptional(
          { id: v.VulnerabilityID, kind: 'vulnerability', severity, target: result.Target, blocking },
          { package: v.PkgName, installed: v.InstalledVersion, fixed, title: v.Title, accepted: isAccepted || undefined },
        ),
      );
    }
    for (const s of result.Secrets ?? []) {
      const severity = severityOf(s.Severity);
      const { blocking, accepted: isAccepted } = verdict(s.RuleID, severity, true);
      findings.push(
        withOptional(
          { id: s.RuleID, kind: 'secret', severity, target: result.Target, blocking },
          { title: s.Title, accepted: isAccepted || undefined },
        ),
      );
    }
  }

  const counts: SeverityCounts = {};
  const blockingCounts: SeverityCounts = {};
  for (const finding of findings) {
    counts[finding.severity] = (counts[finding.severity] ?? 0) + 1;
    if (finding.blocking) blockingCounts[finding.severity] = (blockingCounts[finding.severity] ?? 0) + 1;
  }
  findings.sort(compareFindings);
  return {
    policy,
    blocked: findings.some((f) => f.blocking),
    packages,
    counts,
    blocking_counts: blockingCounts,
    findings: findings.slice(0, MAX_LISTED_FINDINGS),
  };
}

/** The one line a blocked build records as its error: blocking counts and the first ids. */
export function blockedReason(summary: ScanSummary): string | undefined {
  if (!summary.blocked) return undefined;
  const counts = SEVERITIES.filter((s) => summary.blocking_counts[s]).map((s) => `${summary.blocking_counts[s]} ${s}`);
  const ids = [...new Set(summary.findings.filter((f) => f.blocking).map((f) => f.id))].slice(0, 5);
  const total = Object.values(summary.blocking_counts).reduce((a, b) => a + (b ?? 0), 0);
  const more = total > ids.length ? ` and ${total - ids.length} more` : '';
  return `the scan blocked the image: ${counts.join(', ')} (${ids.join(', ')}${more})`;
}

function withOptional<T extends object>(required: T, optional: Record<string, string | true | undefined>): T {
  const out: Record<string, unknown> = { ...(required as Record<string, unknown>) };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined && value !== '') out[key] = value;
  return out as T;
}
