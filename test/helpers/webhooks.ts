import type { Queryable } from '../../src/db/client.js';
import { webhookEndpoints } from '../../src/db/schema/notifications.js';
import type { EventType } from '../../src/features/notifications/index.js';

/** An enabled webhook endpoint subscribed to `events`, as staff would have saved it. */
export async function addWebhookEndpoint(
  db: Queryable,
  now: Date,
  input: { events: EventType[]; name?: string; url?: string; format?: 'json' | 'discord' },
): Promise<void> {
  await db.insert(webhookEndpoints).values({
    name: input.name ?? 'ops',
    url: input.url ?? 'https://hooks.example.com/x',
    secret: 'whsec_test',
    format: input.format ?? 'json',
    events: input.events,
    enabled: true,
    createdBy: 'test',
    createdAt: now,
    updatedAt: now,
  });
}
