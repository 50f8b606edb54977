/**
 * The front door of the fleet feature: the game-level metrics (`felis_*` over the server cache and
 * the database's figures), their refresh task, the hook the schedules feature counts runs by, the
 * webhook events of server transitions, and each server's usage history (sampled each minute).
 */
import type { BackgroundTask } from '../../coordination/index.js';
import type { Deps } from '../../deps.js';
import { figuresOf, fleetFiguresTask } from './figures.js';
import { fleetMetricsOf, registerFleetMetrics } from './metrics.js';
import { serverEventsTask } from './server-events.js';
import { usageSamplingTask } from './usage.js';
import type { ServersParts } from '../servers/index.js';

export { countScheduleRun, fleetMetricsOf, SCHEDULE_OUTCOMES, type FleetMetrics, type ScheduleOutcome } from './metrics.js';

/** Registers the fleet's collectors on the deps' registry (once per registry). */
export function startFleetMetrics(deps: Pick<Deps, 'metrics' | 'cluster' | 'config' | 'clock'> & ServersParts): void {
  registerFleetMetrics(deps, figuresOf(deps.metrics.registry));
}

/** Reads the database's figures now (tests, and the first round of the task). */
export function refreshFleetFigures(deps: Pick<Deps, 'database' | 'clock' | 'metrics'>): Promise<void> {
  return figuresOf(deps.metrics.registry).refresh(deps, fleetMetricsOf(deps.metrics.registry));
}

/**
 * The fleet's background work: each replica refreshes the figures its /metrics shows, and raises
 * the webhook events of the server transitions its cache sees (kept once by their key).
 */
export function fleetTasks(deps: Deps & ServersParts, replica: string): BackgroundTask[] {
  return [fleetFiguresTask(deps, replica, () => fleetMetricsOf(deps.metrics.registry)), serverEventsTask(deps), usageSamplingTask(deps, replica)];
}

export { usageRoutes } from './routes.js';
export { sampleUsage } from './usage.js';

export { serverEventsTask } from './server-events.js';
