import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { AddImageBody, ImageRefParam, ImageRefQuery, ImageSchema, PatchImageBody } from './schema.js';
import { addImage, listImages, removeImage, setImageEnabled } from './service.js';

const ADMIN = { tier: 'admin' } as const;

const list = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/images',
  summary: 'The image whitelist',
  responses: { 200: json(z.object({ images: z.array(ImageSchema) }), 'the whitelist') },
});

const add = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/images',
  summary: 'Whitelist an image (a platform-registry image must exist there)',
  request: jsonBody(AddImageBody),
  responses: {
    201: json(ImageSchema, 'whitelisted'),
    400: errorAnswer('bad_request, or image_not_in_registry'),
    409: errorAnswer('already whitelisted'),
    503: errorAnswer('registry_unavailable'),
  },
});

const patch = defineRoute(ADMIN, {
  method: 'patch',
  path: '/api/v1/images/{image_ref}',
  summary: 'Enable or disable a whitelisted image',
  request: { params: ImageRefParam, ...jsonBody(PatchImageBody) },
  responses: { 200: json(ImageSchema, 'updated'), 404: errorAnswer('not whitelisted') },
});

const remove = defineRoute(ADMIN, {
  method: 'delete',
  path: '/api/v1/images',
  summary: 'Remove an image from the whitelist',
  request: { query: ImageRefQuery },
  responses: { 204: { description: 'removed' }, 404: errorAnswer('not whitelisted') },
});

export function imageRoutes() {
  return createRouter()
    .openapi(list, async (c) => c.json({ images: await listImages(c.var.deps.database.db) }, 200))
    .openapi(add, async (c) => c.json(await addImage(c.var.deps, { imageRef: c.req.valid('json').image_ref, addedBy: c.var.session.userId }), 201))
    .openapi(patch, async (c) => c.json(await setImageEnabled(c.var.deps.database.db, c.req.valid('param').image_ref, c.req.valid('json').enabled), 200))
    .openapi(remove, async (c) => {
      await removeImage(c.var.deps.database.db, c.req.valid('query').ref);
      return c.body(null, 204);
    });
}
