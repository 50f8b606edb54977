import { index, integer, jsonb, pgTable, text, timestamp, unique, uuid, boolean } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Webhook endpoints staff configure. `secret` signs each delivery (HMAC-SHA256): the service must
 * read it to sign, so it is kept as is and shown once, at creation. `events` lists the event types
 * sent there (empty: every type). `format` `discord` sends a Discord-compatible body.
 */
export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  url: text('url').notNull(),
  secret: text('secret').notNull(),
  format: text('format', { enum: ['json', 'discord'] }).notNull(),
  events: jsonb('events').$type<string[]>().notNull(),
  enabled: boolean('enabled').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: at('created_at').notNull(),
  updatedAt: at('updated_at').notNull(),
  /** Failed attempts in a row (any delivery); a success sets it back to 0. */
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  /** The circuit breaker: while in the future, no delivery but a test is attempted. */
  pausedUntil: at('paused_until'),
});

/**
 * The outbox: one row per event and endpoint, written in the request (or sweep) that raised the
 * event and sent later by one replica's delivery loop, so a slow endpoint never delays the request
 * and a restart loses nothing. The row's id is the delivery id the receiver sees on every attempt.
 * `event_key` de-duplicates an event raised by several replicas at once (a transition every
 * replica's cache sees). pending → delivered | failed (given up after the last attempt).
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventKey: text('event_key').notNull(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: at('next_attempt_at').notNull(),
    lastAttemptAt: at('last_attempt_at'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: at('created_at').notNull(),
    deliveredAt: at('delivered_at'),
  },
  (t) => [
    unique('webhook_deliveries_event_uq').on(t.endpointId, t.eventKey),
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
  ],
);
