import { Counter, Gauge, Histogram } from 'prom-client';
import { DESIRED_STATES, PHASES, type ServerResource } from '../../adapters/cluster/types.js';
import type { Deps } from '../../deps.js';
import { SERVICE_VERSION } from '../../version.js';
import { SEVERITY_NAMES, type FleetFigures } from './figures.js';
import type { ServersParts } from '../servers/index.js';

/**
 * The game-level collectors of `/metrics` (`felis_*`). Nothing here queries anything when scraped:
 * the fleet's gauges read the watch-fed server cache in their `collect`, the database's figures
 * come from the snapshot each replica refreshes in the background (figures.ts), and the counters
 * and histograms move on events (the cache's transitions, the snapshot's newly finished rows, a
 * schedule run). Every replica sees the whole fleet, so each reports the fleet's figures:
 * dashboards and alerts aggregate them with `max`, never `sum`.
 */
export interface FleetMetrics {
  readonly figures: FleetFigures;
  wakeToReady: Histogram;
  startFailures: Counter;
  startGiveUps: Counter;
  backupDuration: Histogram;
  backupJobs: Counter<'outcome'>;
  builds: Counter<'outcome'>;
  findings: Counter<'severity'>;
  scheduleRuns: Counter<'outcome'>;
  webhookDeliveries: Counter<'outcome'>;
}

export const WAKE_BUCKETS = [5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600];
export const BACKUP_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];
/** The outcomes a schedule run is counted by: the schedules feature's own results (`finish` in its engine calls `countScheduleRun`). */
export const SCHEDULE_OUTCOMES = ['ok', 'skipped', 'failed'] as const;
export type ScheduleOutcome = (typeof SCHEDULE_OUTCOMES)[number];

/**
 * What the fleet feature makes: its collectors (registered once, on the service's registry, by
 * `createFleetParts`) and the figures they show. The schedules feature is handed it to count runs.
 */
export interface FleetParts {
  fleetMetrics: FleetMetrics;
}

/** Servers by phase, desired state and whether a system service; zeros included so every series exists. */
export function serversByState(servers: Iterable<{ resource: ServerResource; system: boolean }>): Map<string, number> {
  const counts = new Map<string, number>();
  const key = (phase: string, desired: string, system: boolean) => `${phase}\u0000${desired}\u0000${system}`;
  for (const phase of PHASES) for (const desired of DESIRED_STATES) for (const system of [false, true]) counts.set(key(phase, desired, system), 0);
  for (const { resource, system } of servers) {
    const k = key(resource.status.phase, resource.spec.desiredState ?? 'Stopped', system);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** The first `limit` names, in name order: the bound on per-server series. */
function labelled<T extends { resource: ServerResource }>(servers: Iterable<T>, limit: number): T[] {
  if (limit <= 0) return [];
  return [...servers].sort((a, b) => (a.resource.spec.name < b.resource.spec.name ? -1 : 1)).slice(0, limit);
}

/**
 * Registers the fleet collectors on the deps' registry (once per service: a registry takes each
 * name once) and follows the server
 * cache's transitions: a wake (desired state to Running) until the server is ready, a start that
 * fails, a start that gives up.
 */
export function registerFleetMetrics(deps: Pick<Deps, 'metrics' | 'cluster' | 'config' | 'clock'> & ServersParts, figures: FleetFigures): FleetMetrics {
  const { registry } = deps.metrics;
  const registers = [registry];
  const cache = deps.serverCache;
  const limit = deps.config.metricsServerSeries;
  const now = () => deps.clock.now().getTime();

  new Gauge({
    name: 'felis_build_info',
    help: 'Always 1: the version of the control plane that answers, and its runtime.',
    labelNames: ['version', 'runtime'],
    registers,
    collect() {
      this.set({ version: SERVICE_VERSION, runtime: `node ${process.versions.node}` }, 1);
    },
  });
  new Gauge({
    name: 'felis_servers',
    help: 'Servers in the cache by phase, desired state and whether a system service.',
    labelNames: ['phase', 'desired_state', 'system'],
    registers,
    collect() {
      for (const [key, count] of serversByState(cache.all())) {
        const [phase, desired_state, system] = key.split('\u0000') as [string, string, string];
        this.set({ phase, desired_state, system }, count);
      }
    },
  });
  new Gauge({
    name: 'felis_players_online',
    help: 'Players online on every server, as the servers last reported them.',
    registers,
    collect() {
      let total = 0;
      for (const { resource } of cache.all()) total += resource.status.playersOnline;
      this.set(total);
    },
  });
  new Gauge({
    name: 'felis_server_players_online',
    help: `Players online per server (the first METRICS_SERVER_SERIES servers by name).`,
    labelNames: ['server'],
    registers,
    collect() {
      this.reset();
      for (const { resource } of labelled(cache.all(), limit)) this.set({ server: resource.spec.name }, resource.status.playersOnline);
    },
  });
  new Gauge({
    name: 'felis_backup_newest_verified_age_seconds',
    help: "Age of each server's newest verified world backup (the first METRICS_SERVER_SERIES servers by name that have one).",
    labelNames: ['server'],
    registers,
    collect() {
      this.reset();
      const at = now();
      const newest = figures.current().newestVerified;
      const named = labelled(
        [...cache.all()].filter((s) => newest.has(s.resource.spec.name)),
        limit,
      );
      for (const { resource } of named) this.set({ server: resource.spec.name }, Math.max(0, (at - newest.get(resource.spec.name)!.getTime()) / 1000));
    },
  });
  new Gauge({
    name: 'felis_backup_newest_verified_age_max_seconds',
    help: 'The oldest among the servers\' newest verified world backups (every server that has one, unbounded by METRICS_SERVER_SERIES).',
    registers,
    collect() {
      const at = now();
      const newest = figures.current().newestVerified;
      let oldest = 0;
      for (const { resource, system } of cache.all()) {
        const verified = newest.get(resource.spec.name);
        if (!system && verified) oldest = Math.max(oldest, (at - verified.getTime()) / 1000);
      }
      this.set(oldest);
    },
  });
  new Gauge({
    name: 'felis_servers_without_verified_backup',
    help: 'Servers (system services aside) that have no verified, uncorrupted world backup.',
    registers,
    collect() {
      const newest = figures.current().newestVerified;
      let count = 0;
      for (const { resource, system } of cache.all()) if (!system && !newest.has(resource.spec.name)) count += 1;
      this.set(count);
    },
  });
  new Gauge({
    name: 'felis_backup_newest_size_bytes',
    help: "Size of each server's newest present world backup (the first METRICS_SERVER_SERIES servers by name that have one).",
    labelNames: ['server'],
    registers,
    collect() {
      this.reset();
      const sizes = figures.current().newestSize;
      const named = labelled(
        [...cache.all()].filter((s) => sizes.has(s.resource.spec.name)),
        limit,
      );
      for (const { resource } of named) this.set({ server: resource.spec.name }, sizes.get(resource.spec.name)!);
    },
  });
  new Gauge({
    name: 'felis_world_backups',
    help: 'World backup records by status (corrupt ones counted apart, whatever their status).',
    labelNames: ['status'],
    registers,
    collect() {
      for (const [status, count] of figures.current().backupsByStatus) this.set({ status }, count);
    },
  });
  new Gauge({
    name: 'felis_database_backup_age_seconds',
    help: 'Age of the newest control-plane database backup recorded; -1 while none is.',
    registers,
    collect() {
      const at = figures.current().newestDatabaseBackup;
      this.set(at ? Math.max(0, (now() - at.getTime()) / 1000) : -1);
    },
  });
  new Gauge({
    name: 'felis_update_report_age_seconds',
    help: 'Age of the newest update report (the update checker\'s last run); -1 while none is.',
    registers,
    collect() {
      const at = figures.current().newestUpdateReport;
      this.set(at ? Math.max(0, (now() - at.getTime()) / 1000) : -1);
    },
  });
  new Gauge({
    name: 'felis_webhook_outbox_pending',
    help: 'Webhook deliveries waiting in the outbox (not yet delivered, not given up).',
    registers,
    collect() {
      this.set(figures.current().webhooksPending);
    },
  });
  new Gauge({
    name: 'felis_metrics_figures_age_seconds',
    help: 'Age of the database figures this replica shows (refreshed every METRICS_REFRESH_SECONDS); -1 before the first refresh.',
    registers,
    collect() {
      const at = figures.current().refreshedAt;
      this.set(at ? Math.max(0, (now() - at.getTime()) / 1000) : -1);
    },
  });

  const metrics: FleetMetrics = {
    figures,
    wakeToReady: new Histogram({
      name: 'felis_wake_to_ready_seconds',
      help: 'From a wake (the server asked to run while not ready) to its ready callback, as the server cache saw them.',
      buckets: WAKE_BUCKETS,
      registers,
    }),
    startFailures: new Counter({ name: 'felis_server_start_failures_total', help: 'Servers that entered the Failed phase.', registers }),
    startGiveUps: new Counter({
      name: 'felis_server_start_give_ups_total',
      help: 'Server starts that gave up (Failed with no automatic retry left).',
      registers,
    }),
    backupDuration: new Histogram({
      name: 'felis_backup_duration_seconds',
      help: 'Duration of world backup jobs that finished (any outcome).',
      buckets: BACKUP_BUCKETS,
      registers,
    }),
    backupJobs: new Counter({ name: 'felis_backup_jobs_total', help: 'World backup jobs that finished, by outcome.', labelNames: ['outcome'], registers }),
    builds: new Counter({ name: 'felis_builds_total', help: 'Image builds that finished, by outcome.', labelNames: ['outcome'], registers }),
    findings: new Counter({
      name: 'felis_build_findings_total',
      help: 'Findings of the image scans recorded, by severity.',
      labelNames: ['severity'],
      registers,
    }),
    scheduleRuns: new Counter({ name: 'felis_schedule_runs_total', help: 'Schedule runs, by outcome.', labelNames: ['outcome'], registers }),
    webhookDeliveries: new Counter({
      name: 'felis_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome (delivered, failed, gave_up).',
      labelNames: ['outcome'],
      registers,
    }),
  };
  // Every labelled series exists from the start, so a dashboard's query has a zero to show.
  for (const outcome of ['succeeded', 'failed']) metrics.backupJobs.inc({ outcome }, 0);
  for (const outcome of ['succeeded', 'failed', 'cancelled']) metrics.builds.inc({ outcome }, 0);
  for (const severity of SEVERITY_NAMES) metrics.findings.inc({ severity }, 0);
  for (const outcome of SCHEDULE_OUTCOMES) metrics.scheduleRuns.inc({ outcome }, 0);
  for (const outcome of ['delivered', 'failed', 'gave_up']) metrics.webhookDeliveries.inc({ outcome }, 0);

  // Wakes under way on this replica's view: name → when the cache saw the server asked to run.
  const waking = new Map<string, number>();
  cache.onChange((before, after) => {
    if (!after) {
      if (before) waking.delete(before.spec.name);
      return;
    }
    const name = after.spec.name;
    const wantsToRun = after.spec.desiredState === 'Running';
    const wasAsked = before?.spec.desiredState === 'Running';
    // A server first seen already asked to run (the first list) has no known wake time: not timed.
    if (before && wantsToRun && !wasAsked && !after.status.ready) waking.set(name, now());
    if (!wantsToRun) waking.delete(name);
    if (after.status.ready && !before?.status.ready) {
      const since = waking.get(name);
      waking.delete(name);
      if (since !== undefined) metrics.wakeToReady.observe(Math.max(0, (now() - since) / 1000));
    }
    if (before && after.status.phase === 'Failed' && before.status.phase !== 'Failed') metrics.startFailures.inc();
    if (before && after.status.startGaveUp && !before.status.startGaveUp) {
      metrics.startGiveUps.inc();
      waking.delete(name);
    }
  });
  return metrics;
}

/** Counts one schedule run (the schedules feature calls this when a run ends). */
export function countScheduleRun(deps: FleetParts, outcome: ScheduleOutcome): void {
  deps.fleetMetrics.scheduleRuns.inc({ outcome });
}
