import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryPageSchema,
  UpdateWebhookBody,
  WebhookIdParam,
  WebhookSchema,
  WebhookWithSecretSchema,
} from './schema.js';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, sendTest, updateWebhook } from './service.js';

const ADMIN = { tier: 'admin' } as const;
const BASE = '/api/v1/settings/webhooks';
const urlRefusal = 'bad_request (also a url that is not http(s), carries credentials or points into a forbidden network)';

const list = defineRoute(ADMIN, {
  method: 'get',
  path: BASE,
  summary: 'Webhook endpoints (their secrets are never shown again)',
  responses: { 200: json(z.object({ webhooks: z.array(WebhookSchema) }), 'the endpoints') },
});

const create = defineRoute(ADMIN, {
  method: 'post',
  path: BASE,
  summary: 'Add a webhook endpoint; the answer carries its signing secret, once',
  request: jsonBody(CreateWebhookBody),
  responses: { 201: json(WebhookWithSecretSchema, 'added'), 400: errorAnswer(urlRefusal) },
});

const update = defineRoute(ADMIN, {
  method: 'patch',
  path: `${BASE}/{id}`,
  summary: 'Change a webhook endpoint (rotate_secret: a new secret, shown once)',
  request: { params: WebhookIdParam, ...jsonBody(UpdateWebhookBody) },
  responses: { 200: json(z.union([WebhookWithSecretSchema, WebhookSchema]), 'changed'), 400: errorAnswer(urlRefusal), 404: errorAnswer('not_found') },
});

const remove = defineRoute(ADMIN, {
  method: 'delete',
  path: `${BASE}/{id}`,
  summary: 'Delete a webhook endpoint and its deliveries',
  request: { params: WebhookIdParam },
  responses: { 204: { description: 'deleted' }, 400: errorAnswer('bad_request'), 404: errorAnswer('not_found') },
});

const test = defineRoute(ADMIN, {
  method: 'post',
  path: `${BASE}/{id}/test`,
  summary: 'Queue a webhook.test delivery to this endpoint (sent in the background)',
  request: { params: WebhookIdParam },
  responses: { 202: json(z.object({ delivery_id: z.string() }), 'queued'), 400: errorAnswer('bad_request'), 404: errorAnswer('not_found') },
});

const deliveries = defineRoute(ADMIN, {
  method: 'get',
  path: `${BASE}/{id}/deliveries`,
  summary: "An endpoint's recent deliveries, newest first, with their status and last answer",
  request: { params: WebhookIdParam, query: DeliveriesQuery },
  responses: { 200: json(DeliveryPageSchema, 'one page of deliveries'), 400: errorAnswer('bad_request'), 404: errorAnswer('not_found') },
});

export function webhookRoutes() {
  return createRouter()
    .openapi(list, async (c) => c.json({ webhooks: await listWebhooks(c.var.deps) }, 200))
    .openapi(create, async (c) => c.json(await createWebhook(c.var.deps, c.req.valid('json'), { userId: c.var.session.userId, requestId: c.var.requestId }), 201))
    .openapi(update, async (c) =>
      c.json(await updateWebhook(c.var.deps, c.req.valid('param').id, c.req.valid('json'), { userId: c.var.session.userId, requestId: c.var.requestId }), 200),
    )
    .openapi(remove, async (c) => {
      await deleteWebhook(c.var.deps, c.req.valid('param').id, { userId: c.var.session.userId, requestId: c.var.requestId });
      return c.body(null, 204);
    })
    .openapi(test, async (c) => c.json(await sendTest(c.var.deps, c.req.valid('param').id, { userId: c.var.session.userId, requestId: c.var.requestId }), 202))
    .openapi(deliveries, async (c) => c.json(await listDeliveries(c.var.deps, c.req.valid('param').id, c.req.valid('query')), 200));
}
