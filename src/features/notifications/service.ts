import { randomBytes, randomUUID } from 'node:crypto';
import { count, desc, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { webhookDeliveries, webhookEndpoints } from '../../db/schema/notifications.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { writeAudit } from '../audit/index.js';
import { forbiddenNetworks, checkEndpointUrl } from './destinations.js';
import { eventBody, type EventType } from './events.js';
import type { CreateWebhookBody, UpdateWebhookBody, WebhookView } from './schema.js';

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type ServiceDeps = Pick<Deps, 'database' | 'clock' | 'config'>;
export interface Actor {
  userId: string;
  requestId: string | undefined;
}

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

function toView(row: EndpointRow): WebhookView {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    format: row.format,
    events: row.events as EventType[],
    enabled: row.enabled,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    paused_until: row.pausedUntil ? row.pausedUntil.toISOString() : null,
  };
}

async function requireEndpoint(db: Queryable, id: string): Promise<EndpointRow> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  if (!row) throw new DomainError('not_found', 'No such webhook.');
  return row;
}

const audit = (db: Queryable, deps: ServiceDeps, actor: Actor, action: string, target: string, detail?: Record<string, unknown>) =>
  writeAudit(db, { at: deps.clock.now(), actor: actor.userId, action, target, detail: detail ?? null, requestId: actor.requestId ?? null });

export async function listWebhooks(deps: Pick<Deps, 'database'>): Promise<WebhookView[]> {
  const rows = await deps.database.db.select().from(webhookEndpoints).orderBy(webhookEndpoints.createdAt);
  return rows.map(toView);
}

export async function createWebhook(deps: ServiceDeps, input: CreateWebhookBody, actor: Actor) {
  const url = checkEndpointUrl(input.url, forbiddenNetworks(deps.config.webhookForbiddenNetworks));
  const now = deps.clock.now();
  return deps.database.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({ name: input.name, url, secret: newSecret(), format: input.format, events: [...new Set(input.events)], enabled: input.enabled, createdBy: actor.userId, createdAt: now, updatedAt: now })
      .returning();
    await audit(tx, deps, actor, 'webhook.create', row!.id, { name: row!.name, url: row!.url });
    return { ...toView(row!), secret: row!.secret };
  });
}

export async function updateWebhook(deps: ServiceDeps, id: string, input: UpdateWebhookBody, actor: Actor) {
  const url = input.url === undefined ? undefined : checkEndpointUrl(input.url, forbiddenNetworks(deps.config.webhookForbiddenNetworks));
  return deps.database.db.transaction(async (tx) => {
    await requireEndpoint(tx, id);
    const [row] = await tx
      .update(webhookEndpoints)
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(url !== undefined ? { url } : {}),
        ...(input.format !== undefined ? { format: input.format } : {}),
        ...(input.events !== undefined ? { events: [...new Set(input.events)] } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        ...(input.rotate_secret ? { secret: newSecret() } : {}),
        updatedAt: deps.clock.now(),
      })
      .where(eq(webhookEndpoints.id, id))
      .returning();
    const { rotate_secret, ...changed } = input;
    await audit(tx, deps, actor, 'webhook.update', id, { ...changed, ...(rotate_secret ? { secret_rotated: true } : {}) });
    return rotate_secret ? { ...toView(row!), secret: row!.secret } : toView(row!);
  });
}

export async function deleteWebhook(deps: ServiceDeps, id: string, actor: Actor): Promise<void> {
  await deps.database.db.transaction(async (tx) => {
    const row = await requireEndpoint(tx, id);
    await tx.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
    await audit(tx, deps, actor, 'webhook.delete', id, { name: row.name, url: row.url });
  });
}

/** Queues a `webhook.test` delivery to this endpoint only (enabled or not: a test is how staff check it). */
export async function sendTest(deps: ServiceDeps, id: string, actor: Actor): Promise<{ delivery_id: string }> {
  const now = deps.clock.now();
  return deps.database.db.transaction(async (tx) => {
    const endpoint = await requireEndpoint(tx, id);
    const key = randomUUID();
    const payload = eventBody({ type: 'webhook.test', at: now, summary: `A test of the webhook "${endpoint.name}".`, subject: { kind: 'webhook', id } }, key);
    const [row] = await tx
      .insert(webhookDeliveries)
      .values({ endpointId: id, eventKey: key, eventType: 'webhook.test', payload, status: 'pending', nextAttemptAt: now, createdAt: now })
      .returning({ id: webhookDeliveries.id });
    await audit(tx, deps, actor, 'webhook.test', id);
    return { delivery_id: row!.id };
  });
}

export async function listDeliveries(deps: Pick<Deps, 'database'>, id: string, page: { limit: number; offset: number }) {
  const { db } = deps.database;
  await requireEndpoint(db, id);
  const where = eq(webhookDeliveries.endpointId, id);
  const [rows, [total]] = await Promise.all([
    db.select().from(webhookDeliveries).where(where).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).limit(page.limit).offset(page.offset),
    db.select({ n: count() }).from(webhookDeliveries).where(where),
  ]);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    deliveries: rows.map((r) => ({
      id: r.id,
      event_type: r.eventType,
      status: r.status,
      attempts: r.attempts,
      next_attempt_at: r.status === 'pending' ? r.nextAttemptAt.toISOString() : null,
      last_attempt_at: iso(r.lastAttemptAt),
      last_status: r.lastStatus,
      last_error: r.lastError,
      created_at: r.createdAt.toISOString(),
      delivered_at: iso(r.deliveredAt),
    })),
    total: Number(total?.n ?? 0),
  };
}
