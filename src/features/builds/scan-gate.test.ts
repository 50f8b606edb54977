import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blockedReason, evaluateScan, MAX_LISTED_FINDINGS, ScanReportError } from './scan-gate.js';
import { policyFromSettings } from './scan-policy.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const modpack = fixture('trivy-modpack.json');

describe('the scan gate on a Trivy report', () => {
  it('blocks on a fixable CRITICAL under the default policy, never on an unfixed one', () => {
    const summary = evaluateScan(modpack, { fail_on: ['CRITICAL'], fail_unfixed: false });
    expect(summary.blocked).toBe(true);
    expect(summary.packages).toBe(6);
    expect(summary.counts).toEqual({ CRITICAL: 3, HIGH: 3, MEDIUM: 2, LOW: 1 });
    // log4shell (fixed) and the AWS key; gson's will_not_fix CRITICAL does not block.
    expect(summary.blocking_counts).toEqual({ CRITICAL: 2 });
    expect(summary.findings.slice(0, 2).map((f) => [f.id, f.kind, f.blocking])).toEqual([
      ['CVE-2021-44228', 'vulnerability', true],
      ['aws-access-key-id', 'secret', true],
    ]);
    expect(summary.findings[0]).toEqual({
      id: 'CVE-2021-44228',
      kind: 'vulnerability',
      severity: 'CRITICAL',
      target: 'data/mods/serverutils.jar',
      blocking: true,
      package: 'org.apache.logging.log4j:log4j-core',
      installed: '2.14.1',
      fixed: '2.15.0, 2.3.1, 2.12.2',
      title: 'log4j-core: Remote code execution in Log4j 2.x when logs contain an attacker-controlled string value',
    });
    const unfixed = summary.findings.find((f) => f.id === 'CVE-2022-25647')!;
    expect(unfixed).toMatchObject({ blocking: false, severity: 'CRITICAL' });
    expect(unfixed).not.toHaveProperty('fixed');
    expect(summary.findings[1]).toEqual({
      id: 'aws-access-key-id',
      kind: 'secret',
      severity: 'CRITICAL',
      target: '/data/config/discord.env',
      blocking: true,
      title: 'AWS Access Key ID',
    });
    // The rest, most severe first.
    expect(summary.findings.slice(2).map((f) => f.severity)).toEqual(['CRITICAL', 'HIGH', 'HIGH', 'HIGH', 'MEDIUM', 'MEDIUM', 'LOW']);
    expect(blockedReason(summary)).toBe('the scan blocked the image: 2 CRITICAL (CVE-2021-44228, aws-access-key-id)');
  });

  it('blocks unfixed findings too with fail_unfixed, and HIGH when the policy names it', () => {
    const summary = evaluateScan(modpack, { fail_on: ['CRITICAL', 'HIGH'], fail_unfixed: true });
    expect(summary.blocking_counts).toEqual({ CRITICAL: 3, HIGH: 3 });
    expect(summary.findings.slice(0, 6).every((f) => f.blocking)).toBe(true);
    expect(summary.findings.slice(6).some((f) => f.blocking)).toBe(false);
  });

  it('never blocks on an accepted id, but still counts and lists it marked accepted', () => {
    const policy = { fail_on: ['CRITICAL' as const], fail_unfixed: false, accept: ['CVE-2021-44228', 'aws-access-key-id'] };
    const summary = evaluateScan(modpack, policy);
    expect(summary.blocked).toBe(false);
    expect(summary.blocking_counts).toEqual({});
    expect(summary.counts.CRITICAL).toBe(3);
    const accepted = summary.findings.filter((f) => f.accepted);
    expect(accepted.map((f) => f.id).sort()).toEqual(['CVE-2021-44228', 'aws-access-key-id']);
    expect(accepted.every((f) => !f.blocking)).toBe(true);
    expect(summary.findings.filter((f) => !f.accepted).every((f) => !('accepted' in f))).toBe(true);
    expect(blockedReason(summary)).toBeUndefined();
    expect(summary.policy).toEqual(policy);
  });

  it('a secret blocks by its own severity: a HIGH secret only when HIGH is in fail_on', () => {
    const onlyHigh = evaluateScan(modpack, { fail_on: ['HIGH'], fail_unfixed: false });
    expect(onlyHigh.findings.filter((f) => f.blocking).map((f) => f.id).sort()).toEqual([
      'CVE-2023-5363',
      'GHSA-4jrv-ppp4-jm57',
      'discord-bot-token',
    ]);
  });

  it('passes a clean image with zero-free counts and an empty findings list', () => {
    const summary = evaluateScan(fixture('trivy-clean.json'), { fail_on: ['CRITICAL'], fail_unfixed: true });
    expect(summary).toEqual({
      policy: { fail_on: ['CRITICAL'], fail_unfixed: true },
      blocked: false,
      packages: 2,
      counts: {},
      blocking_counts: {},
      findings: [],
    });
  });

  it('lists at most 100 findings, blocking ones first, while counting them all', () => {
    const vulns = Array.from({ length: 150 }, (_, i) => ({
      VulnerabilityID: `CVE-2024-${String(10000 + i)}`,
      PkgName: 'p',
      InstalledVersion: '1',
      ...(i % 50 === 0 ? { FixedVersion: '2' } : {}),
      Severity: i % 50 === 0 ? 'CRITICAL' : i % 2 ? 'LOW' : 'weird',
    }));
    const summary = evaluateScan({ SchemaVersion: 2, Results: [{ Target: 't', Vulnerabilities: vulns }] }, { fail_on: ['CRITICAL'], fail_unfixed: false });
    expect(summary.findings).toHaveLength(MAX_LISTED_FINDINGS);
    expect(summary.counts).toEqual({ CRITICAL: 3, LOW: 75, UNKNOWN: 72 });
    expect(summary.findings.slice(0, 3).every((f) => f.blocking)).toBe(true);
    expect(summary.findings[3]!.severity).toBe('LOW');
  });

  it('refuses what is not a Trivy v2 report', () => {
    for (const bad of [null, 'x', {}, { SchemaVersion: 1, Results: [] }, { SchemaVersion: 2, Results: [{ Vulnerabilities: [] }] }]) {
      expect(() => evaluateScan(bad, { fail_on: ['CRITICAL'], fail_unfixed: false })).toThrow(ScanReportError);
    }
  });
});

describe('the policy read from settings', () => {
  it('uses the defaults, reads lists and ignores malformed entries', () => {
    expect(policyFromSettings({})).toEqual({ fail_on: ['CRITICAL'], fail_unfixed: false });
    expect(
      policyFromSettings({ scan_fail_on: 'high, critical,bogus', scan_fail_unfixed: true, scan_accept: ['CVE-1', 'no spaces', 'CVE-1'] }),
    ).toEqual({ fail_on: ['CRITICAL', 'HIGH'], fail_unfixed: true, accept: ['CVE-1'] });
    expect(policyFromSettings({ scan_fail_on: [], scan_fail_unfixed: 'yes' })).toEqual({ fail_on: ['CRITICAL'], fail_unfixed: false });
  });
});
