/**
 * The front door of the schedules feature: a server's scheduled tasks (a command, restart, stop,
 * start or backup at set times in a time zone) and the runner that makes each due run once across
 * the replicas.
 */
export { scheduleRoutes } from './routes.js';
export { followRestarts, schedulesTask, tickSchedules } from './engine.js';
export { createSchedules } from './module.js';
export { forgetServerSchedules } from './service.js';
