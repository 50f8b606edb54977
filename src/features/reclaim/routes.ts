import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { McUuidSchema } from '../accounts/index.js';
import { DateTime, McUuidParam, PrintableText } from '../linking/index.js';
import { isBarred } from '../verifier/index.js';
import { reclaim } from './service.js';
import type { VerifierParts } from '../verifier/index.js';
import type { AppDeps } from '../../http/env.js';

const ReclaimRequest = z.strictObject({
  squatter_uuid: McUuidSchema,
  username: PrintableText(64).min(1),
  data_ref: PrintableText(1024).optional(),
});

const reclaimRoute = defineRoute(
  { tier: 'service', callers: ['proxy'] },
  {
    method: 'post',
    path: '/api/v1/internal/player/reclaim',
    summary: 'Bar a squatter UUID (never the name) and hold its data 30 days; a repeat is a no-op',
    request: jsonBody(ReclaimRequest),
    responses: {
      200: json(z.object({ blacklisted: z.literal(true), username: z.string(), hold_expires_at: DateTime }), 'barred'),
      409: errorAnswer('protected_admin: the UUID is linked to a staff account'),
    },
  },
);

const blacklist = defineRoute(
  { tier: 'service', callers: ['proxy', 'limbo'] },
  {
    method: 'get',
    path: '/api/v1/internal/player/blacklist/{mc_uuid}',
    summary: 'Whether a UUID is barred by a reclaim (the login gate)',
    request: { params: McUuidParam },
    responses: { 200: json(z.object({ blacklisted: z.boolean() }), 'bar state'), 400: errorAnswer('bad_request: not a UUID') },
  },
);

/** Reclaim and the login gate's bar check. Internal face. */
export function reclaimRoutes(deps: AppDeps & VerifierParts) {
  return createRouter()
    .openapi(reclaimRoute, async (c) => {
      const body = c.req.valid('json');
      const holdExpiresAt = await reclaim(deps, {
        squatterUuid: body.squatter_uuid,
        username: body.username,
        dataRef: body.data_ref,
        requestId: c.var.requestId,
      });
      return c.json({ blacklisted: true as const, username: body.username, hold_expires_at: holdExpiresAt.toISOString() }, 200);
    })
    .openapi(blacklist, async (c) => {
      const blacklisted = await isBarred(deps.database.db, c.req.valid('param').mc_uuid);
      return c.json({ blacklisted }, 200);
    });
}
