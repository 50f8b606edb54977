import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import type { Access } from '../../http/tiers.js';
import { LinkCodeRequest, LinkCodeResponse, LinkedResponse, McUuidParam } from './schema.js';
import { isUuidLinked, mintLinkCode } from './service.js';

const GATE: Access = { tier: 'service', callers: ['proxy', 'limbo'] };

const linkCode = defineRoute(GATE, {
  method: 'post',
  path: '/api/v1/internal/account/link/code',
  summary: 'Mint a one-time link and bind code for a verified player UUID',
  request: jsonBody(LinkCodeRequest),
  responses: { 201: json(LinkCodeResponse, 'the code (10 minutes, single use)') },
});

const linkStatus = defineRoute(GATE, {
  method: 'get',
  path: '/api/v1/internal/account/link/status/{mc_uuid}',
  summary: 'Whether a UUID is linked to an account (read-only)',
  request: { params: McUuidParam },
  responses: { 200: json(LinkedResponse, 'link state'), 400: errorAnswer('bad_request: not a UUID') },
});

/** The proxy's and the lobby's half of linking. Internal face. */
export function internalLinkingRoutes() {
  return createRouter()
    .openapi(linkCode, async (c) => {
      const { deps } = c.var;
      const body = c.req.valid('json');
      const minted = await mintLinkCode(deps, body.mc_uuid, body.auth_source);
      const panelHost = deps.config.panelHost?.trim().toLowerCase();
      return c.json(
        {
          code: minted.code,
          expires_at: minted.expiresAt.toISOString(),
          ...(panelHost ? { panel_url: `https://${panelHost}/` } : {}),
        },
        201,
      );
    })
    .openapi(linkStatus, async (c) => {
      const linked = await isUuidLinked(c.var.deps.database.db, c.req.valid('param').mc_uuid);
      return c.json({ linked }, 200);
    });
}
