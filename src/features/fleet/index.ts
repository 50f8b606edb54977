/**
 * The front door of the fleet feature: the game-level metrics (`felis_*` over the server cache and
 * the database's figures), their refresh task, the hook the schedules feature counts runs by, the
 * webhook events of server transitions, and each server's usage history (sampled each minute).
 */
import type { Deps } from '../../deps.js';
import { FleetFigures } from './figures.js';
import { registerFleetMetrics, type FleetParts } from './metrics.js';
import type { ServersParts } from '../servers/index.js';

export { countScheduleRun, SCHEDULE_OUTCOMES, type FleetMetrics, type FleetParts, type ScheduleOutcome } from './metrics.js';

/**
 * The fleet's part: its collectors registered on the deps' registry, with their figures (once per
 * service: the game-level collectors exist from the start, whoever assembles the service). `given`
 * replaces them (tests and benches).
 */
export function createFleetParts(deps: Pick<Deps, 'metrics' | 'cluster' | 'config' | 'clock'> & ServersParts, given: Partial<FleetParts> = {}): FleetParts {
  return { fleetMetrics: given.fleetMetrics ?? registerFleetMetrics(deps, new FleetFigures()) };
}

/** Reads the database's figures now (tests, and the first round of the task). */
export function refreshFleetFigures(deps: Pick<Deps, 'database' | 'clock'> & FleetParts): Promise<void> {
  return deps.fleetMetrics.figures.refresh(deps, deps.fleetMetrics);
}

/**
 * The fleet module (its background work: each replica refreshes the figures its /metrics shows,
 * and raises the webhook events of the server transitions its cache sees, kept once by their key).
 */
export { createFleet } from './module.js';
export { usageRoutes } from './routes.js';
export { sampleUsage } from './usage.js';

export { serverEventsTask } from './server-events.js';
