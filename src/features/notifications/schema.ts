import { z } from '@hono/zod-openapi';
import { PageQuery } from '../../http/paging.js';
import { EVENT_TYPES } from './events.js';

const EventTypeSchema = z.enum(EVENT_TYPES).openapi('WebhookEventType');
const Name = z.string().trim().min(1).max(100);
const Url = z.string().min(1).max(2048).openapi({ example: 'https://hooks.example.com/felis' });
const Format = z.enum(['json', 'discord']);
const Events = z.array(EventTypeSchema).max(EVENT_TYPES.length).openapi({ description: 'Event types sent there; empty: every type' });

export const CreateWebhookBody = z
  .strictObject({ name: Name, url: Url, format: Format.default('json'), events: Events.default([]), enabled: z.boolean().default(true) })
  .openapi('CreateWebhook');
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

export const UpdateWebhookBody = z
  .strictObject({
    name: Name.optional(),
    url: Url.optional(),
    format: Format.optional(),
    events: Events.optional(),
    enabled: z.boolean().optional(),
    /** A new signing secret, shown once in the answer. */
    rotate_secret: z.literal(true).optional(),
  })
  .openapi('UpdateWebhook');
export type UpdateWebhookBody = z.infer<typeof UpdateWebhookBody>;

export const WebhookIdParam = z.object({ id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }) });
export const DeliveriesQuery = z.strictObject({ ...PageQuery });

export const WebhookSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    format: Format,
    events: z.array(EventTypeSchema),
    enabled: z.boolean(),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
    paused_until: z
      .string()
      .nullable()
      .openapi({ format: 'date-time', description: 'After failures in a row, deliveries wait until then (a test is still sent); null while it answers' }),
  })
  .openapi('Webhook');
export type WebhookView = z.infer<typeof WebhookSchema>;

export const WebhookWithSecretSchema = WebhookSchema.extend({
  secret: z.string().openapi({ description: 'Signs every delivery (X-Felis-Signature); shown only here' }),
}).openapi('WebhookWithSecret');

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ description: 'The delivery id (X-Felis-Delivery), the same on every attempt' }),
    event_type: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    last_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    delivered_at: z.string().nullable(),
  })
  .openapi('WebhookDelivery');

export const DeliveryPageSchema = z.object({ deliveries: z.array(DeliverySchema), total: z.number().int() }).openapi('WebhookDeliveryPage');
