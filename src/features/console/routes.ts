import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppDeps, SignedInEnv } from '../../http/env.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import {
  changeBan,
  changeGroup,
  changePermission,
  changeWhitelist,
  kickPlayer,
  luckPermsUser,
  onlinePlayers,
  readBanlist,
  readWhitelist,
} from './access.js';
import {
  AccessResult,
  BanBody,
  CommandBody,
  CommandResult,
  GroupBody,
  KickBody,
  KickResult,
  LuckPermsResult,
  OnlinePlayersResult,
  PermissionBody,
  PlayerListResult,
  ServerNameParam,
  ServerPlayerParams,
  WhitelistBody,
} from './schema.js';
import { consoleCommand, type ConsoleCaller } from './service.js';
import type { ServersParts } from '../servers/index.js';

const consoleErrors = {
  403: errorAnswer('not the owner or staff'),
  404: errorAnswer('no such server'),
  409: errorAnswer('not_running: the server is not running'),
  503: errorAnswer('console_unavailable: RCON cannot be reached'),
};
const luckPermsErrors = { ...consoleErrors, 409: errorAnswer('not_running, or luckperms_missing: the server has no LuckPerms') };

const accessPath = (rest: string) => `/api/v1/servers/{name}/access/${rest}` as const;

const command = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/command',
  summary: 'Run one console command over RCON (owner or staff)',
  request: { params: ServerNameParam, ...jsonBody(CommandBody) },
  responses: { 200: json(CommandResult, 'the raw reply'), ...consoleErrors },
});

const listRoute = <T extends z.ZodType>(rest: string, summary: string, schema: T) =>
  defineRoute({ tier: 'app' }, {
    method: 'get',
    path: accessPath(rest),
    summary,
    request: { params: ServerNameParam },
    responses: { 200: json(schema, 'the parsed list and the raw reply'), ...consoleErrors },
  });

const changeRoute = <S extends z.ZodType, T extends z.ZodType>(rest: string, summary: string, body: S, result: T, errors = consoleErrors) =>
  defineRoute({ tier: 'app' }, {
    method: 'post',
    path: accessPath(rest),
    summary,
    request: { params: ServerNameParam, ...jsonBody(body) },
    responses: { 200: json(result, 'the raw reply'), ...errors },
  });

const whitelistList = listRoute('whitelist', 'The whitelist', PlayerListResult);
const players = listRoute('players', 'Who is online', OnlinePlayersResult);
const banList = listRoute('ban', 'The ban list', PlayerListResult);
const whitelist = changeRoute('whitelist', 'Add or remove a whitelisted player', WhitelistBody, AccessResult);
const ban = changeRoute('ban', 'Ban or pardon a player', BanBody, AccessResult);
const kick = changeRoute('kick', 'Kick a player (they may rejoin)', KickBody, KickResult);
const permission = changeRoute('permission', 'Set or unset a LuckPerms permission of a player', PermissionBody, AccessResult, luckPermsErrors);
const group = changeRoute('group', 'Add or remove a LuckPerms parent group of a player', GroupBody, AccessResult, luckPermsErrors);

const luckPerms = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: accessPath('luckperms/{player}'),
  summary: "A player's LuckPerms groups and permissions",
  request: { params: ServerPlayerParams },
  responses: { 200: json(LuckPermsResult, 'the parsed permissions and the raw replies'), ...luckPermsErrors },
});

/** The caller of a console operation: the route's session and request. */
const callerOf = (c: Context<SignedInEnv>): ConsoleCaller => ({ session: c.var.session, requestId: c.var.requestId });

/** The console command and the access operations (external face, owner or staff). */
export function consoleRoutes(deps: AppDeps & ServersParts) {
  return createRouter()
    .openapi(command, async (c) => {
      const { name } = c.req.valid('param');
      const output = await consoleCommand(deps, callerOf(c), name, c.req.valid('json').command);
      return c.json({ name, output }, 200);
    })
    .openapi(whitelistList, async (c) => {
      const { name } = c.req.valid('param');
      return c.json({ name, ...(await readWhitelist(deps, callerOf(c), name)) }, 200);
    })
    .openapi(players, async (c) => {
      const { name } = c.req.valid('param');
      return c.json({ name, ...(await onlinePlayers(deps, callerOf(c), name)) }, 200);
    })
    .openapi(banList, async (c) => {
      const { name } = c.req.valid('param');
      return c.json({ name, ...(await readBanlist(deps, callerOf(c), name)) }, 200);
    })
    .openapi(whitelist, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const output = await changeWhitelist(deps, callerOf(c), name, body);
      return c.json({ name, action: body.action, player: body.player, output }, 200);
    })
    .openapi(ban, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const output = await changeBan(deps, callerOf(c), name, body);
      return c.json({ name, action: body.action, player: body.player, output }, 200);
    })
    .openapi(kick, async (c) => {
      const { name } = c.req.valid('param');
      const { player } = c.req.valid('json');
      const output = await kickPlayer(deps, callerOf(c), name, player);
      return c.json({ name, player, output }, 200);
    })
    .openapi(permission, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const output = await changePermission(deps, callerOf(c), name, body);
      return c.json({ name, action: body.action, player: body.player, node: body.node, output }, 200);
    })
    .openapi(group, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const output = await changeGroup(deps, callerOf(c), name, body);
      return c.json({ name, action: body.action, player: body.player, group: body.group, output }, 200);
    })
    .openapi(luckPerms, async (c) => {
      const { name, player } = c.req.valid('param');
      return c.json({ player, ...(await luckPermsUser(deps, callerOf(c), name, player)) }, 200);
    });
}
