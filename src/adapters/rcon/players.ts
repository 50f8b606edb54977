export interface PlayerCount {
  online: number;
  max: number;
}

// `§x` colour codes (EssentialsX colours its numbers) are removed before matching.
const COLOUR_CODE = /§[0-9a-fk-orx]/gi;

const REPLIES: RegExp[] = [
  // Vanilla 1.13+: "There are 3 of a max of 20 players online: Alice, Bob, Carol"
  /^There are (\d+) of a max(?:imum)? of (\d+) players online/i,
  // Vanilla before 1.13: "There are 3/20 players online:"
  /^There are (\d+)\/(\d+) players online/i,
  // Bukkit, Spigot, Paper and EssentialsX: "There are 3 out of maximum 20 players online."
  /^There (?:are|is) (\d+) out of (?:a )?maximum (?:of )?(\d+) players? online/i,
];

/** The player count in a `list` reply, or undefined when no known server wrote it. */
export function parsePlayerList(reply: string): PlayerCount | undefined {
  const text = reply.replace(COLOUR_CODE, '').trim();
  for (const pattern of REPLIES) {
    const match = pattern.exec(text);
    if (match) {
      const online = Number(match[1]);
      const max = Number(match[2]);
      if (Number.isSafeInteger(online) && Number.isSafeInteger(max)) return { online, max };
    }
  }
  return undefined;
}
