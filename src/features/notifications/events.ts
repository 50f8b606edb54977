import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { webhookDeliveries, webhookEndpoints } from '../../db/schema/notifications.js';

/**
 * The events a webhook endpoint may subscribe to. Features raise them with `raiseEvent`:
 * `schedule.failed` the schedules feature, `node.maintenance_*` the nodes feature's task runner.
 */
export const EVENT_TYPES = [
  'server.start_failed',
  'server.start_gave_up',
  'backup.failed',
  'backup.corrupt',
  'build.blocked',
  'submission.pending_review',
  'schedule.failed',
  'node.maintenance_started',
  'node.maintenance_ended',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface FleetEvent {
  type: EventType;
  /** When it happened. */
  at: Date;
  /** A line a person reads (the Discord body's description). */
  summary: string;
  /** What it is about: a server, a build, a submission, a node. */
  subject: { kind: 'server' | 'backup' | 'build' | 'submission' | 'schedule' | 'node' | 'webhook'; id: string };
  data?: Record<string, unknown>;
  /**
   * The same key twice is the same event: raised by several replicas at once (a transition each
   * replica's server cache sees), it is delivered once. Default: unique.
   */
  key?: string;
}

/** The body of a JSON delivery: what every receiver of the event gets (the delivery id is a header). */
export function eventBody(event: FleetEvent, eventId: string) {
  return {
    id: eventId,
    type: event.type,
    at: event.at.toISOString(),
    summary: event.summary,
    subject: event.subject,
    data: event.data ?? {},
  };
}

/**
 * Puts the event in the outbox for every enabled endpoint subscribed to its type: pass the
 * transaction of the change it reports, so the event is kept exactly when the change is. Nothing is
 * sent here: the delivery loop sends it, so the request that raised it never waits on an endpoint.
 * Resolves how many deliveries were queued.
 */
export async function raiseEvent(db: Queryable, event: FleetEvent): Promise<number> {
  const endpoints = await db.select({ id: webhookEndpoints.id, events: webhookEndpoints.events }).from(webhookEndpoints).where(eq(webhookEndpoints.enabled, true));
  const subscribed = endpoints.filter((e) => e.events.length === 0 || e.events.includes(event.type));
  if (subscribed.length === 0) return 0;
  const key = event.key ?? randomUUID();
  const payload = eventBody(event, key);
  const rows = await db
    .insert(webhookDeliveries)
    .values(
      subscribed.map((endpoint) => ({
        endpointId: endpoint.id,
        eventKey: key,
        eventType: event.type,
        payload,
        status: 'pending' as const,
        nextAttemptAt: event.at,
        createdAt: event.at,
      })),
    )
    .onConflictDoNothing()
    .returning({ id: webhookDeliveries.id });
  return rows.length;
}
