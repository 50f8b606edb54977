import { describe, expect, it } from 'vitest';
import { parsePlayerList } from './players.js';

describe('player count from an RCON list reply', () => {
  it.each([
    ['vanilla', 'There are 3 of a max of 20 players online: Alice, Bob, Carol', { online: 3, max: 20 }],
    ['vanilla, empty', 'There are 0 of a max of 20 players online: ', { online: 0, max: 20 }],
    ['vanilla before 1.13', 'There are 1/10 players online:\nAlice', { online: 1, max: 10 }],
    ['Bukkit and Paper', 'There are 2 out of maximum 50 players online.\nAlice, Bob', { online: 2, max: 50 }],
    ['EssentialsX, coloured', '§6There are §c4§6 out of maximum §c100§6 players online.\n§6Admins§r: Alice', { online: 4, max: 100 }],
    ['EssentialsX, one player', '§6There is §c1§6 out of maximum §c20§6 player online.', { online: 1, max: 20 }],
  ])('reads %s', (_kind, reply, expected) => {
    expect(parsePlayerList(reply)).toEqual(expected);
  });

  it.each(['', 'Unknown command', 'An internal error occurred', 'There are many players online'])('returns undefined for %j', (reply) => {
    expect(parsePlayerList(reply)).toBeUndefined();
  });
});
