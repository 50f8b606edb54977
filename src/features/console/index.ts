/**
 * The front door of the console feature: what the rest of the service may use of it.
 */
export { comparePositions, formatEventId, LastEventIdHeader, LineNumbering, resumePosition, type StreamPosition } from './event-ids.js';
export { LogHubs } from './log-hub.js';
export type { ConsoleParts } from './log-hub.js';
export { consoleRoutes } from './routes.js';
export { consoleStreamRoutes } from './stream-route.js';
export { releasePreviousStreamSlots, takeStreamSlot } from './stream-slots.js';
export { normaliseCommand } from './charset.js';
export { rconCommand } from './service.js';
export { createConsole, createConsoleParts } from './module.js';
