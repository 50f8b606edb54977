import { describe, expect, it } from 'vitest';
import { isUnknownCommand, parseBanlist, parsePermissionInfo, parsePlayerList, parseWhitelist, splitGroups } from './replies.js';

describe('reply parsing (best effort)', () => {
  it('reads whitelist replies of current and older servers', () => {
    expect(parseWhitelist('There are 2 whitelisted player(s): Alice, Bob_2')).toEqual(['Alice', 'Bob_2']);
    expect(parseWhitelist('There are 2 whitelisted players: Alice, Bob')).toEqual(['Alice', 'Bob']);
    expect(parseWhitelist('There are no whitelisted players')).toEqual([]);
    expect(parseWhitelist('There are 1 whitelisted player(s): not a name, Ok')).toEqual(['Ok']);
  });

  it('reads the list reply, colours and all', () => {
    expect(parsePlayerList('There are 0 of a max of 20 players online: ')).toEqual({ online: 0, max: 20, players: [] });
    expect(parsePlayerList('§6There are §c2§6 of a max of §c10§6 players online: §fA, B')).toEqual({ online: 2, max: 10, players: ['A', 'B'] });
    expect(parsePlayerList('something else')).toEqual({ online: 0, max: 0, players: [] });
  });

  it('reads ban entries under every separator, reasons with colons included', () => {
    const entries = ['Alice was banned by Rcon: Banned: griefing.', 'Bob was banned by Server: Banned by an operator.'];
    for (const sep of ['\n', ' ', '']) expect(parseBanlist(`There are 2 ban(s):${sep}${entries.join(sep)}`)).toEqual(['Alice', 'Bob']);
    expect(parseBanlist('There are no bans')).toEqual([]);
  });

  it('tells an unknown command from a LuckPerms answer', () => {
    expect(isUnknownCommand('Unknown or incomplete command. See below for error\nlp user x<--[HERE]')).toBe(true);
    expect(isUnknownCommand('Unknown or incomplete command, see below for error')).toBe(true);
    expect(isUnknownCommand('§fUnknown command. Type "/help" for help.')).toBe(true);
    expect(isUnknownCommand('')).toBe(false);
    expect(isUnknownCommand('§7[§b§lL§3§lP§7]§r §7unknown command queue')).toBe(false);
  });

  it('reads LuckPerms permission info: values from colours, worlds, pages, groups apart', () => {
    const reply = [
      "§7[§b§lL§3§lP§7]§r §bSteve's Permissions:  §7(page §f1§7 of §f3§7 - §f31§7 entries)",
      '§3> §agroup.default',
      '§3> §cgroup.banned',
      '§3> §aworldedit.* §7(§fworld=nether§7)',
      '> plain.node',
    ].join('\n');
    const { entries, pages } = parsePermissionInfo(reply);
    expect(pages).toBe(3);
    expect(entries).toEqual([
      { node: 'group.default', value: true },
      { node: 'group.banned', value: false },
      { node: 'worldedit.*', value: true, world: 'nether' },
      { node: 'plain.node', value: true },
    ]);
    expect(splitGroups(entries)).toEqual({
      groups: ['default'],
      permissions: [entries[1], entries[2], entries[3]],
    });
  });
});
