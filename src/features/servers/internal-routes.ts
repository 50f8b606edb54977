import { z } from '@hono/zod-openapi';
import type { Context, TypedResponse } from 'hono';
import { createRouter, defineRoute, errorAnswer, json } from '../../http/route.js';
import type { Access } from '../../http/tiers.js';
import { claimForPlayer } from './ownership/index.js';
import { allServers } from './lists.js';
import { serverByHost, serverByName } from './core/index.js';
import {
  ClaimResponse,
  McUuidBody,
  McUuidSchema,
  MenuResponse,
  ServerInfoSchema,
  type ServerInfo,
  type ServerMenu,
  ServerNameParam,
  WakeInternalResponse,
} from './core/index.js';
import { MenuAccessResponse, MenuAnswers, type MenuVerdict } from './menu-access.js';
import { recordJoin, recordReady, wakeForPlayer } from './service.js';
import { infoJsonOf, type CachedServer, type ServersParts } from './core/index.js';
import type { AppDeps } from '../../http/env.js';

const PROXY: Access = { tier: 'service', callers: ['proxy'] };
/** The proxy asks these on every connection (the menus on every lobby visit): their successful answers' log lines are sampled. */
const HOT_READ = { hotRead: true };
const noContent = (description: string) => ({ description });
const mcUuidBody = { body: { content: { 'application/json': { schema: McUuidBody } } } };

const list = defineRoute(PROXY, {
  method: 'get',
  path: '/api/v1/servers',
  summary: 'Every server, from the watch-fed cache',
  responses: { 200: json(z.object({ servers: z.array(ServerInfoSchema) }), 'the servers') },
});

const byHost = defineRoute(PROXY, {
  method: 'get',
  path: '/api/v1/servers/by-host/{host}',
  summary: 'The server a connecting hostname names (subdomain.ROOT_DOMAIN or the bare subdomain); 400 bad_host outside the root domain',
  request: {
    params: z.object({ host: z.string().min(1).max(255).openapi({ param: { name: 'host', in: 'path' }, example: 'survival.example.net' }) }),
  },
  responses: {
    200: json(ServerInfoSchema, 'the server'),
    400: errorAnswer('bad_host: a dotted host outside the root domain'),
    404: errorAnswer('no server has this host'),
  },
}, HOT_READ);

const ready = defineRoute(PROXY, {
  method: 'post',
  path: '/api/v1/internal/servers/{name}/ready',
  summary: 'Backend readiness callback',
  request: { params: ServerNameParam },
  responses: { 204: noContent('recorded'), 404: errorAnswer('no such server') },
});

const joinEvent = defineRoute(PROXY, {
  method: 'post',
  path: '/api/v1/internal/servers/{name}/join-event',
  summary: 'A player joined (activity tracking, idle reset)',
  request: { params: ServerNameParam, ...mcUuidBody },
  responses: { 204: noContent('recorded'), 404: errorAnswer('no such server') },
});

const wake = defineRoute(PROXY, {
  method: 'post',
  path: '/api/v1/internal/servers/{name}/wake',
  summary: 'Wake a server for a joining player (autostart policy, cooldown, capacity)',
  request: { params: ServerNameParam, ...mcUuidBody },
  responses: {
    202: json(WakeInternalResponse, 'the server is starting, or is ready already (`ready: true`, answered before policy and cooldown)'),
    403: errorAnswer('wrong_caller, the autostart policy refuses this player (forbidden), or wake_share_exceeded (servers woken but not owned, or the owner’s share of the running slots)'),
    404: errorAnswer('no such server'),
    409: errorAnswer('maintenance_in_progress, node_operation_busy (its node is under maintenance), server_retiring or start_failed'),
    429: errorAnswer('cooldown: woken moments ago (Retry-After)'),
    503: errorAnswer('at_capacity, or the cluster cannot be reached'),
  },
});

const status = defineRoute(PROXY, {
  method: 'get',
  path: '/api/v1/internal/servers/{name}/status',
  summary: 'A server’s status, from the cache',
  request: { params: ServerNameParam },
  responses: { 200: json(ServerInfoSchema, 'the server'), 404: errorAnswer('no such server') },
}, HOT_READ);

const claim = defineRoute(PROXY, {
  method: 'post',
  path: '/api/v1/internal/servers/{name}/claim',
  summary: 'Claim an unowned server for the player’s linked account',
  request: { params: ServerNameParam, ...mcUuidBody },
  responses: {
    200: json(ClaimResponse, 'claimed'),
    403: errorAnswer('wrong_caller, quota_exceeded, or the account is disabled'),
    404: errorAnswer('no such server'),
    409: errorAnswer('already_claimed'),
    412: errorAnswer('not_linked: the player has no linked account'),
  },
});

const menu = defineRoute(PROXY, {
  method: 'get',
  path: '/api/v1/internal/servers/{name}/menu',
  summary: 'What the in-game server menu shows',
  request: {
    params: ServerNameParam,
    query: z.object({ mc_uuid: McUuidSchema.optional().openapi({ param: { name: 'mc_uuid', in: 'query' } }) }),
  },
  responses: { 200: json(MenuResponse, 'the menu entry'), 404: errorAnswer('no such server') },
}, HOT_READ);

const menuAccessRoute = defineRoute(PROXY, {
  method: 'get',
  path: '/api/v1/internal/player/menu-access/{mc_uuid}',
  summary: 'What this player may do with each server tile of the lobby menu (one call per menu open)',
  request: { params: z.object({ mc_uuid: McUuidSchema.openapi({ param: { name: 'mc_uuid', in: 'path' } }) }) },
  responses: { 200: json(MenuAccessResponse, 'a verdict per server'), 503: errorAnswer('the cluster cannot be reached') },
}, HOT_READ);

const JSON_TYPE = { 'Content-Type': 'application/json' };

/** An answer whose JSON text is already made, as `c.json(value, 200)` would have written it. */
function jsonTextAnswer<T>(c: Context, text: string) {
  return c.body(text, 200, JSON_TYPE) as unknown as TypedResponse<T, 200, 'json'>;
}

/** The same, when the text may still be on its way (a menu whose facts are being read). */
function laterJsonTextAnswer<T>(c: Context, text: string | Promise<string>) {
  return text instanceof Promise ? text.then((made) => jsonTextAnswer<T>(c, made)) : jsonTextAnswer<T>(c, text);
}

/**
 * A server's ServerInfo answer, as `c.json(server.info, 200)` would write it, from the text the
 * cache keeps (infoJsonOf): the hot reads encode a server once per change, not once per request.
 */
function infoAnswer(c: Context, server: CachedServer) {
  return jsonTextAnswer<ServerInfo>(c, infoJsonOf(server));
}

/** The proxy's server routes on the internal face; lookups are answered from the cache. */
export function internalServerRoutes(deps: AppDeps & ServersParts) {
  const menus = new MenuAnswers(deps);
  return createRouter()
    .openapi(list, async (c) => c.json({ servers: await allServers(deps) }, 200))
    .openapi(byHost, (c) => {
      // The proxy's hot path: one map lookup, answered synchronously once the cache is synced.
      const found = serverByHost(deps, c.req.valid('param').host);
      return found instanceof Promise ? found.then((server) => infoAnswer(c, server)) : infoAnswer(c, found);
    })
    .openapi(ready, async (c) => {
      await recordReady(deps, c.req.valid('param').name);
      return c.body(null, 204);
    })
    .openapi(joinEvent, async (c) => {
      await recordJoin(deps, c.req.valid('param').name, c.req.valid('json').mc_uuid);
      return c.body(null, 204);
    })
    .openapi(wake, async (c) => {
      const { name } = c.req.valid('param');
      const woken = await wakeForPlayer(deps, name, c.req.valid('json').mc_uuid);
      return c.json({ name, desiredState: 'Running' as const, phase: woken.status.phase, ready: woken.status.ready }, 202);
    })
    .openapi(status, (c) => {
      // Like by-host: answered synchronously from the synced cache.
      const found = serverByName(deps, c.req.valid('param').name);
      return found instanceof Promise ? found.then((server) => infoAnswer(c, server)) : infoAnswer(c, found);
    })
    .openapi(claim, async (c) => {
      const { name } = c.req.valid('param');
      await claimForPlayer(deps, name, c.req.valid('json').mc_uuid);
      return c.json({ name, claimed: true as const }, 200);
    })
    // Both answered from memory (MenuAnswers), synchronously once the facts are kept.
    .openapi(menuAccessRoute, (c) => laterJsonTextAnswer<{ servers: Record<string, MenuVerdict> }>(c, menus.menuAccess(c.req.valid('param').mc_uuid)))
    .openapi(menu, (c) => laterJsonTextAnswer<ServerMenu>(c, menus.menu(c.req.valid('param').name)));
}
