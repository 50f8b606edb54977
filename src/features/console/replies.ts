/**
 * Best-effort reading of vanilla and LuckPerms replies. Every answer also carries the raw reply,
 * so a plugin's or a newer server's wording loses nothing; names found are only ever ones that
 * match the player charset.
 */

const COLOUR = /§[0-9a-fk-or]/gi;
const NAME_IN_LIST = /^[A-Za-z0-9_]{1,16}$/;

export const stripColours = (text: string) => text.replace(COLOUR, '');

/** The names after a reply's colon ("…: a, b, c"), keeping only well-formed player names. */
function namesAfterColon(reply: string, from: 'first' | 'last'): string[] {
  const text = stripColours(reply);
  const at = from === 'first' ? text.indexOf(':') : text.lastIndexOf(':');
  if (at < 0) return [];
  return text
    .slice(at + 1)
    .split(',')
    .map((part) => part.trim())
    .filter((part) => NAME_IN_LIST.test(part));
}

/** `whitelist list`: "There are 2 whitelisted player(s): a, b" or "There are no whitelisted players". */
export function parseWhitelist(reply: string): string[] {
  return namesAfterColon(reply, 'last');
}

const LIST_COUNT = /There are (\d+) of a max of (\d+) players online/;

/** `list`: "There are 1 of a max of 20 players online: a". Counts are 0 when the line is not there. */
export function parsePlayerList(reply: string): { online: number; max: number; players: string[] } {
  const count = LIST_COUNT.exec(stripColours(reply));
  return {
    online: count ? Number(count[1]) : 0,
    max: count ? Number(count[2]) : 0,
    players: namesAfterColon(reply, 'first'),
  };
}

/**
 * `banlist`: one "<name> was banned by <source>: <reason>" per ban. Anchored on the marker, not on
 * lines or colons: servers join the entries with a newline, a space or nothing, and a reason holds
 * colons of its own.
 */
export function parseBanlist(reply: string): string[] {
  return [...stripColours(reply).matchAll(/([A-Za-z0-9_]{1,16}) was banned by/g)].map((m) => m[1]!);
}

/** A server without the plugin answers an `lp` command as an unknown command. */
export function isUnknownCommand(reply: string): boolean {
  return /^\s*unknown (or incomplete )?command\b/i.test(stripColours(reply));
}

export interface PermissionEntry {
  node: string;
  value: boolean;
  world?: string;
}

/**
 * `lp user <player> permission info`: one "> node" entry per permission, its colour giving the
 * value (green granted, red negated; no colour counts as granted), a `world=` context after it,
 * and a "page 1 of N" header.
 */
export function parsePermissionInfo(reply: string): { entries: PermissionEntry[]; pages: number } {
  const marks = [...reply.matchAll(/>\s*((?:§[0-9a-fk-or])*)([A-Za-z0-9_.*-]{1,64})/gi)];
  const entries = marks.map((mark, i) => {
    const tailEnd = i + 1 < marks.length ? marks[i + 1]!.index : reply.length;
    const tail = stripColours(reply.slice(mark.index + mark[0].length, tailEnd));
    const world = /world=([A-Za-z0-9_-]{1,48})/.exec(tail)?.[1];
    const entry: PermissionEntry = { node: mark[2]!, value: !/§c/i.test(mark[1]!) };
    if (world) entry.world = world;
    return entry;
  });
  const pages = /page\s+\d+\s+of\s+(\d+)/.exec(stripColours(reply));
  return { entries, pages: pages ? Number(pages[1]) : 0 };
}

/** Parent groups (granted, global `group.<name>` nodes) apart from the other permissions. */
export function splitGroups(entries: PermissionEntry[]): { groups: string[]; permissions: PermissionEntry[] } {
  const groups: string[] = [];
  const permissions: PermissionEntry[] = [];
  for (const entry of entries) {
    const group = entry.node.startsWith('group.') ? entry.node.slice('group.'.length) : undefined;
    if (group && entry.value && entry.world === undefined && /^[A-Za-z0-9_-]{1,48}$/.test(group)) groups.push(group);
    else permissions.push(entry);
  }
  return { groups, permissions };
}
