import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { DomainError } from '../../lib/errors.js';
import { linkProfile, linkSources, lookupProfile } from './profile.js';
import { AuthSourceSchema, LinkVerifiedResponse } from './schema.js';

const Tag = z.string().max(64);
const lookupErrors = {
  400: errorAnswer('bad_request (neither a name nor a UUID), auth_source_unknown, or auth_source_lookup_unsupported'),
  403: errorAnswer('forbidden: staff only'),
  404: errorAnswer('minecraft_profile_not_found'),
  503: errorAnswer('auth_source_unavailable: the source cannot be asked, or answered something unusable'),
};

const sources = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/account/link/sources',
  summary: 'The session sources a login asks, primary first, and whether a profile can be looked up at each (staff)',
  responses: {
    200: json(z.object({ sources: z.array(z.object({ tag: z.string(), lookup_available: z.boolean() })) }), 'the sources'),
    403: errorAnswer('forbidden: staff only'),
  },
});

const lookup = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/account/link/profile',
  summary: 'Look a player up by name or UUID at one source (staff); `profile` is the original panel’s parameter, `name` an alias',
  request: {
    query: z.strictObject({
      source: Tag.openapi({ param: { name: 'source', in: 'query' } }),
      profile: z.string().max(64).optional().openapi({ param: { name: 'profile', in: 'query' } }),
      name: z.string().max(64).optional().openapi({ param: { name: 'name', in: 'query' } }),
    }),
  },
  responses: {
    200: json(
      z.object({ source: z.string(), name: z.string(), profile_uuid: z.string(), mc_uuid: z.uuid(), auth_source: AuthSourceSchema }).openapi('MinecraftProfile'),
      'the player, with the UUID a login through that source gives',
    ),
    ...lookupErrors,
  },
});

const link = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/account/link/profile',
  summary: 'Link a player a source knows to my own account (staff; needs a fresh reauth proof)',
  request: jsonBody(z.strictObject({ source: Tag, profile_uuid: z.string().max(64) })),
  responses: {
    200: json(LinkVerifiedResponse, 'linked'),
    ...lookupErrors,
    403: errorAnswer('forbidden: staff only; reauth_required'),
    409: errorAnswer('already_linked: another account holds this player'),
  },
});

/** The panel's profile look-up and link through the configured sources. External face. */
export function profileLinkRoutes() {
  return createRouter()
    .openapi(sources, async (c) => c.json({ sources: await linkSources(c.var.deps, c.var.session) }, 200))
    .openapi(lookup, async (c) => {
      const { source, profile, name } = c.req.valid('query');
      const input = profile ?? name;
      if (input === undefined || (profile !== undefined && name !== undefined)) {
        throw new DomainError('bad_request', 'Name the player with `profile` (or `name`), once.');
      }
      return c.json(await lookupProfile(c.var.deps, c.var.session, source, input), 200);
    })
    .openapi(link, async (c) => c.json(await linkProfile(c.var.deps, c.var.session, c.req.valid('json'), c.var.requestId), 200));
}
