import type { FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import { webhookDeliveryTask } from './outbox.js';
import { webhookRoutes } from './routes.js';

/** The notifications module: the webhook settings routes and the delivery round of the outbox. */
export function createNotifications(infrastructure: AppDeps): FeatureModule {
  return { name: 'notifications', api: {}, routes: { external: [webhookRoutes()] }, tasks: [webhookDeliveryTask(infrastructure, infrastructure.replica)] };
}
