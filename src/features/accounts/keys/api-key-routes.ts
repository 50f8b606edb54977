import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../../http/route.js';
import { createApiKey, keyView, listApiKeys, revokeApiKey } from './api-keys.js';

const ApiKeyView = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'the secret\'s first 12 characters (`felis_` and 6 more)' }),
    scopes: z.array(z.enum(['read', 'write'])),
    created_at: z.iso.datetime({ offset: true }),
    last_used_at: z.iso.datetime({ offset: true }).optional().openapi({ description: 'updated at most once a minute' }),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  })
  .openapi('ApiKey');

const CreateApiKey = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    scopes: z.union([z.tuple([z.literal('read')]), z.tuple([z.literal('read'), z.literal('write')])]).optional().openapi({ description: "['read'] or ['read','write'] (the default)" }),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  })
  .openapi('CreateApiKey');

const list = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/account/api-keys',
  summary: 'My live API keys, oldest first (never a secret)',
  responses: { 200: json(z.object({ keys: z.array(ApiKeyView) }).openapi('ApiKeyList'), 'the keys') },
});

const create = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/account/api-keys',
  summary: 'Make an API key (a fresh proof first; never with a key): its secret is in this answer and never again',
  request: jsonBody(CreateApiKey),
  responses: {
    201: json(ApiKeyView.extend({ secret: z.string().openapi({ description: '`felis_` and 43 random characters; send as `Authorization: Bearer`' }) }).openapi('NewApiKey'), 'the key, with its secret shown this once'),
    400: errorAnswer('bad_request: an expires_at in the past, or bad fields'),
    403: errorAnswer('forbidden (through a key), or reauth_required'),
    409: errorAnswer('conflict: the account holds as many keys as it may'),
  },
});

const revoke = defineRoute({ tier: 'app' }, {
  method: 'delete',
  path: '/api/v1/account/api-keys/{id}',
  summary: 'Revoke one of my API keys (never with a key); its next request is 401',
  request: { params: z.object({ id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }) }) },
  responses: { 204: { description: 'revoked' }, 403: errorAnswer('forbidden (through a key)'), 404: errorAnswer('not_found: no such live key of mine') },
});

/** The account's API keys (issue 42). External face, app tier. */
export function apiKeyRoutes() {
  return createRouter()
    .openapi(list, async (c) => c.json({ keys: (await listApiKeys(c.var.deps, c.var.session)).map(keyView) }, 200))
    .openapi(create, async (c) => {
      const body = c.req.valid('json');
      const { row, secret } = await createApiKey(
        c.var.deps,
        c.var.session,
        { name: body.name, scopes: body.scopes ? [...body.scopes] : undefined, expiresAt: body.expires_at ? new Date(body.expires_at) : undefined },
        c.var.requestId,
      );
      return c.json({ ...keyView(row), secret }, 201);
    })
    .openapi(revoke, async (c) => {
      await revokeApiKey(c.var.deps, c.var.session, c.req.valid('param').id, c.var.requestId);
      return c.body(null, 204);
    });
}
