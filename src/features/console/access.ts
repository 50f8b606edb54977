import type { z } from '@hono/zod-openapi';
import { parseBanlist, parsePermissionInfo, parsePlayerList, parseWhitelist, splitGroups, type PermissionEntry } from './replies.js';
import type { BanBody, GroupBody, PermissionBody, WhitelistBody } from './schema.js';
import { rconCommand, runConsoleAction, type ConsoleCaller, type ConsoleDeps } from './service.js';

/**
 * The access operations of a server's console: its whitelist, bans, kicks and LuckPerms
 * permissions and groups, each one RCON command whose reply is read best effort and also answered raw.
 */

/** LuckPerms pages its permission list; the read follows at most this many pages. */
const MAX_PERMISSION_PAGES = 10;

export async function readWhitelist(deps: ConsoleDeps, caller: ConsoleCaller, name: string): Promise<{ players: string[]; output: string }> {
  const output = await runConsoleAction(deps, caller, { name, need: 'access', command: 'whitelist list' });
  return { players: parseWhitelist(output), output };
}

export async function onlinePlayers(deps: ConsoleDeps, caller: ConsoleCaller, name: string) {
  const output = await runConsoleAction(deps, caller, { name, need: 'access', command: 'list' });
  return { ...parsePlayerList(output), output };
}

export async function readBanlist(deps: ConsoleDeps, caller: ConsoleCaller, name: string): Promise<{ players: string[]; output: string }> {
  const output = await runConsoleAction(deps, caller, { name, need: 'access', command: 'banlist' });
  return { players: parseBanlist(output), output };
}

export function changeWhitelist(deps: ConsoleDeps, caller: ConsoleCaller, name: string, change: z.infer<typeof WhitelistBody>): Promise<string> {
  const audit = { action: `access.whitelist.${change.action}`, detail: { player: change.player } };
  return runConsoleAction(deps, caller, { name, need: 'access', command: `whitelist ${change.action} ${change.player}`, audit });
}

export function changeBan(deps: ConsoleDeps, caller: ConsoleCaller, name: string, change: z.infer<typeof BanBody>): Promise<string> {
  const audit = { action: `access.ban.${change.action}`, detail: { player: change.player } };
  return runConsoleAction(deps, caller, { name, need: 'access', command: `${change.action} ${change.player}`, audit });
}

export function kickPlayer(deps: ConsoleDeps, caller: ConsoleCaller, name: string, player: string): Promise<string> {
  return runConsoleAction(deps, caller, { name, need: 'access', command: `kick ${player}`, audit: { action: 'access.kick', detail: { player } } });
}

/** Sets (a grant unless `value` is false) or unsets a permission, globally or in one world. */
export function changePermission(deps: ConsoleDeps, caller: ConsoleCaller, name: string, change: z.infer<typeof PermissionBody>): Promise<string> {
  const world = change.world ? ` world=${change.world}` : '';
  const command =
    change.action === 'set'
      ? `lp user ${change.player} permission set ${change.node} ${change.value ?? true}${world}`
      : `lp user ${change.player} permission unset ${change.node}${world}`;
  const detail = { player: change.player, node: change.node, ...(change.action === 'set' ? { value: change.value ?? true } : {}), ...(world ? { world: change.world } : {}) };
  return runConsoleAction(deps, caller, { name, need: 'access', command, audit: { action: `access.permission.${change.action}`, detail }, luckPerms: true });
}

export function changeGroup(deps: ConsoleDeps, caller: ConsoleCaller, name: string, change: z.infer<typeof GroupBody>): Promise<string> {
  const audit = { action: `access.group.${change.action}`, detail: { player: change.player, group: change.group } };
  return runConsoleAction(deps, caller, { name, need: 'access', command: `lp user ${change.player} parent ${change.action} ${change.group}`, audit, luckPerms: true });
}

/** A player's LuckPerms groups and other permissions, from every page of the permission list. */
export async function luckPermsUser(
  deps: ConsoleDeps,
  caller: ConsoleCaller,
  name: string,
  player: string,
): Promise<{ groups: string[]; permissions: PermissionEntry[]; output: string }> {
  const first = await runConsoleAction(deps, caller, { name, need: 'access', command: `lp user ${player} permission info`, luckPerms: true });
  const replies = [first];
  const { entries, pages } = parsePermissionInfo(first);
  // Later pages are best effort: a failure keeps what was read.
  for (let page = 2; page <= Math.min(pages, MAX_PERMISSION_PAGES); page++) {
    const more = await rconCommand(deps, name, `lp user ${player} permission info ${page}`).catch(() => undefined);
    if (more === undefined) break;
    replies.push(more);
    entries.push(...parsePermissionInfo(more).entries);
  }
  return { ...splitGroups(entries), output: replies.join('\n') };
}
