import { z } from '@hono/zod-openapi';
import { ServerNameParam } from '../servers/index.js';
import { CONTEXT_NAME, PERMISSION_NODE, PLAYER_NAME } from './charset.js';

const player = z.string().regex(PLAYER_NAME, 'a player name is 1 to 16 of letters, digits and underscore').openapi({ example: 'Steve' });
const node = z.string().regex(PERMISSION_NODE, 'a permission node is 1 to 64 of letters, digits and . _ - *').openapi({ example: 'essentials.fly' });
const context = (what: string) => z.string().regex(CONTEXT_NAME, `a ${what} is 1 to 48 of letters, digits, _ and -`);

export const CommandBody = z.object({ command: z.string().max(4096) }).strict().openapi('ConsoleCommand');
export const CommandResult = z.object({ name: z.string(), output: z.string() }).openapi('ConsoleCommandResult');

export const WhitelistBody = z.object({ action: z.enum(['add', 'remove']), player }).strict();
export const BanBody = z.object({ action: z.enum(['ban', 'pardon']), player }).strict();
export const KickBody = z.object({ player }).strict();
export const PermissionBody = z
  .object({
    action: z.enum(['set', 'unset']),
    player,
    node,
    /** `set` only; omitted means true (a grant), as the original reads it. */
    value: z.boolean().optional(),
    /** The `world=` context; empty means global, as the original panel may send it. */
    world: z.union([z.literal(''), context('world')]).optional(),
  })
  .strict();
export const GroupBody = z.object({ action: z.enum(['add', 'remove']), player, group: context('group') }).strict();

export const PlayerListResult = z.object({ name: z.string(), players: z.array(z.string()), output: z.string() }).openapi('AccessPlayerList');
export const OnlinePlayersResult = z
  .object({ name: z.string(), online: z.number().int(), max: z.number().int(), players: z.array(z.string()), output: z.string() })
  .openapi('AccessOnlinePlayers');
export const AccessResult = z
  .object({
    name: z.string(),
    action: z.string(),
    player: z.string().optional(),
    node: z.string().optional(),
    group: z.string().optional(),
    output: z.string(),
  })
  .openapi('AccessResult');
export const KickResult = z.object({ name: z.string(), player: z.string(), output: z.string() }).openapi('AccessKickResult');
export const LuckPermsResult = z
  .object({
    player: z.string(),
    groups: z.array(z.string()),
    permissions: z.array(z.object({ node: z.string(), value: z.boolean(), world: z.string().optional() })),
    output: z.string(),
  })
  .openapi('LuckPermsUser');

export const ServerPlayerParams = ServerNameParam.extend({ player: player.openapi({ param: { name: 'player', in: 'path' } }) });
export { ServerNameParam };
