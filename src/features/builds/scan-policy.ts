import { readValues } from '../runtime-settings/index.js';
import type { Queryable } from '../../db/client.js';
import { SEVERITIES, type ScanPolicy, type Severity } from './scan-gate.js';

/** The registry settings that make the policy, with the original's defaults. */
export const SCAN_SETTINGS = { failOn: 'scan_fail_on', failUnfixed: 'scan_fail_unfixed', accept: 'scan_accept' } as const;
export const DEFAULT_FAIL_ON: Severity[] = ['CRITICAL'];

/** The shape of an accepted id: CVE-…, GHSA-…, DLA-…, aws-access-key-id. */
const FINDING_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** A setting's list (a JSON array or a comma-separated string) as trimmed, non-empty strings. */
function listOf(value: unknown): string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  return items.filter((v): v is string => typeof v === 'string').map((v) => v.trim()).filter((v) => v !== '');
}

/**
 * The policy in force. A malformed entry is left out rather than trusted; an empty or unreadable
 * `scan_fail_on` falls back to the default, so a broken setting never admits everything.
 */
export function policyFromSettings(values: Record<string, unknown>): ScanPolicy {
  const named = new Set(listOf(values[SCAN_SETTINGS.failOn]).map((s) => s.toUpperCase()));
  const failOn = SEVERITIES.filter((s) => named.has(s));
  const accept = [...new Set(listOf(values[SCAN_SETTINGS.accept]).filter((id) => FINDING_ID.test(id)))];
  const policy: ScanPolicy = {
    fail_on: failOn.length > 0 ? failOn : [...DEFAULT_FAIL_ON],
    fail_unfixed: values[SCAN_SETTINGS.failUnfixed] === true,
  };
  if (accept.length > 0) policy.accept = accept;
  return policy;
}

export async function readScanPolicy(db: Queryable): Promise<ScanPolicy> {
  return policyFromSettings(await readValues(db, Object.values(SCAN_SETTINGS)));
}
