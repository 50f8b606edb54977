/**
 * The front door of the notifications feature: webhook endpoints staff configure
 * (`/settings/webhooks`), the outbox every feature raises its events into (`raiseEvent`, in the
 * transaction of the change it reports), and the one-replica loop that delivers them.
 */
export { EVENT_TYPES, raiseEvent, type EventType, type FleetEvent } from './events.js';
export { pendingDeliveries, webhookDeliveryTask } from './outbox.js';
export { webhookRoutes } from './routes.js';
export { createNotifications } from './module.js';
