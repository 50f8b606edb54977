import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { LifecycleController, type LifecycleOptions } from '../../src/adapters/cluster/kubernetes/controller.js';
import { createTestApps, createTestDeps, bearer } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { createMetrics } from '../../src/http/metrics.js';

const MONITORING = join(import.meta.dirname, '../../deploy/monitoring');

/** Every `felis_*` metric family a PromQL expression names (a histogram's _bucket/_sum/_count as its family). */
function familiesIn(expr: string, histograms: Set<string>): string[] {
  return [...expr.matchAll(/\bfelis_[a-z0-9_]+/g)].map(([name]) => {
    const family = name.replace(/_(bucket|sum|count)$/, '');
    return family !== name && histograms.has(family) ? family : name;
  });
}

/** Families (and their types) as `/metrics` exposes them. */
function exposed(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => [name!, type!]));
}

/** Only on Kubernetes: the lifecycle controller registers these when it is made. */
function kubernetesFamilies(): Map<string, string> {
  const registry = new Registry();
  new LifecycleController({ registry } as unknown as LifecycleOptions);
  return new Map(registry.getMetricsAsArray().map((m) => [m.name, (m as unknown as { type: string }).type]));
}

describe('deploy/monitoring: the dashboard and the alerts query metrics the service exports', () => {
  const database = useTestDatabase();
  let families: Map<string, string>;

  beforeAll(async () => {
    // The service's own registry, default process metrics included, as /metrics serves it.
    const deps = createTestDeps(database(), { overrides: { metrics: createMetrics() } });
    const apps = createTestApps(deps);
    await apps.internal.request('/healthz');
    const res = await apps.internal.request('/metrics', { headers: bearer('ops') });
    expect(res.status).toBe(200);
    families = new Map([...exposed(await res.text()), ...kubernetesFamilies()]);
  });

  const histograms = () => new Set([...families].filter(([, type]) => type === 'histogram').map(([name]) => name));

  it('the dashboard is provisioned by a ConfigMap with the grafana_dashboard label', () => {
    const [kustomization] = parseAllDocuments(readFileSync(join(MONITORING, 'kustomization.yaml'), 'utf8')).map((d) => d.toJS());
    const generated = kustomization.configMapGenerator.find((g: { name: string }) => g.name === 'felis-grafana-dashboard');
    expect(generated.options.labels.grafana_dashboard).toBe('1');
    expect(generated.files).toEqual(['dashboards/felis-fleet.json']);
  });

  it('every metric the dashboard queries exists in /metrics', () => {
    const dashboard = JSON.parse(readFileSync(join(MONITORING, 'dashboards/felis-fleet.json'), 'utf8')) as {
      uid: string;
      panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
    };
    expect(dashboard.uid).toBe('felis-fleet');
    const queried = new Set<string>();
    const titles = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(titles).toEqual(['Fleet', 'Proxy hot path', 'Wakes', 'Backups', 'Builds and schedules']);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets!) for (const family of familiesIn(target.expr, histograms())) queried.add(family);
    }
    expect(queried.size).toBeGreaterThan(20);
    expect([...queried].filter((name) => !families.has(name))).toEqual([]);
  });

  it('every alert queries metrics that exist, and carries a summary and a runbook', () => {
    const [rule] = parseAllDocuments(readFileSync(join(MONITORING, 'alerts.yaml'), 'utf8')).map((d) => d.toJS());
    const alerts = rule.spec.groups.flatMap((g: { rules: unknown[] }) => g.rules) as Array<{ alert: string; expr: string; annotations: Record<string, string> }>;
    const names = alerts.map((a) => a.alert);
    for (const wanted of [
      'FelisServerStartFailures',
      'FelisStartsGivingUp',
      'FelisWorldBackupStale',
      'FelisDatabaseBackupStale',
      'FelisUpdateReportStale',
      'FelisNoLifecycleLeader',
      'FelisApiErrors',
    ]) {
      expect(names).toContain(wanted);
    }
    for (const alert of alerts) {
      expect(alert.annotations.summary, alert.alert).toBeTruthy();
      expect(alert.annotations.runbook?.length, alert.alert).toBeGreaterThan(20);
      expect(familiesIn(alert.expr, histograms()).filter((name) => !families.has(name)), alert.alert).toEqual([]);
    }
    expect(alerts.find((a) => a.alert === 'FelisWorldBackupStale')!.expr).toContain('26 * 3600');
  });
});
