import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv, SignedInEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { normaliseCommand } from './charset.js';
import { parseBanlist, parsePermissionInfo, parsePlayerList, parseWhitelist, splitGroups } from './replies.js';
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
import { rconCommand, runConsoleAction, type ConsoleAction } from './service.js';

/** LuckPerms pages its permission list; the read follows at most this many pages. */
const MAX_PERMISSION_PAGES = 10;

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

function action(c: Context<SignedInEnv>, name: string, commandText: string, audit?: { action: string; detail: Record<string, unknown> }, luckPermsCommand = false) {
  const run: ConsoleAction = { session: c.var.session, name, command: commandText, luckPerms: luckPermsCommand };
  if (audit) run.audit = { ...audit, requestId: c.var.requestId };
  return runConsoleAction(c.var.deps, run);
}

/** The console command and the access operations (external face, owner or staff). */
export function consoleRoutes() {
  return createRouter()
    .openapi(command, async (c) => {
      const { name } = c.req.valid('param');
      const checked = normaliseCommand(c.req.valid('json').command);
      if ('problem' in checked) throw new DomainError('bad_request', checked.problem);
      const output = await action(c, name, checked.command, { action: 'console.command', detail: {} });
      return c.json({ name, output }, 200);
    })
    .openapi(whitelistList, async (c) => {
      const { name } = c.req.valid('param');
      const output = await action(c, name, 'whitelist list');
      return c.json({ name, players: parseWhitelist(output), output }, 200);
    })
    .openapi(players, async (c) => {
      const { name } = c.req.valid('param');
      const output = await action(c, name, 'list');
      return c.json({ name, ...parsePlayerList(output), output }, 200);
    })
    .openapi(banList, async (c) => {
      const { name } = c.req.valid('param');
      const output = await action(c, name, 'banlist');
      return c.json({ name, players: parseBanlist(output), output }, 200);
    })
    .openapi(whitelist, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const output = await action(c, name, `whitelist ${body.action} ${body.player}`, { action: `access.whitelist.${body.action}`, detail: { player: body.player } });
      return c.json({ name, action: body.action, player: body.player, output }, 200);
    })
    .openapi(ban, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const output = await action(c, name, `${body.action} ${body.player}`, { action: `access.ban.${body.action}`, detail: { player: body.player } });
      return c.json({ name, action: body.action, player: body.player, output }, 200);
    })
    .openapi(kick, async (c) => {
      const { name } = c.req.valid('param');
      const { player } = c.req.valid('json');
      const output = await action(c, name, `kick ${player}`, { action: 'access.kick', detail: { player } });
      return c.json({ name, player, output }, 200);
    })
    .openapi(permission, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const world = body.world ? ` world=${body.world}` : '';
      const commandText =
        body.action === 'set'
          ? `lp user ${body.player} permission set ${body.node} ${body.value ?? true}${world}`
          : `lp user ${body.player} permission unset ${body.node}${world}`;
      const detail = { player: body.player, node: body.node, ...(body.action === 'set' ? { value: body.value ?? true } : {}), ...(world ? { world: body.world } : {}) };
      const output = await action(c, name, commandText, { action: `access.permission.${body.action}`, detail }, true);
      return c.json({ name, action: body.action, player: body.player, node: body.node, output }, 200);
    })
    .openapi(group, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const output = await action(
        c,
        name,
        `lp user ${body.player} parent ${body.action} ${body.group}`,
        { action: `access.group.${body.action}`, detail: { player: body.player, group: body.group } },
        true,
      );
      return c.json({ name, action: body.action, player: body.player, group: body.group, output }, 200);
    })
    .openapi(luckPerms, async (c) => {
      const { name, player } = c.req.valid('param');
      const first = await action(c, name, `lp user ${player} permission info`, undefined, true);
      const replies = [first];
      const { entries, pages } = parsePermissionInfo(first);
      // Later pages are best effort: a failure keeps what was read.
      for (let page = 2; page <= Math.min(pages, MAX_PERMISSION_PAGES); page++) {
        const more = await rconCommand(c.var.deps, name, `lp user ${player} permission info ${page}`).catch(() => undefined);
        if (more === undefined) break;
        replies.push(more);
        entries.push(...parsePermissionInfo(more).entries);
      }
      return c.json({ player, ...splitGroups(entries), output: replies.join('\n') }, 200);
    });
}
