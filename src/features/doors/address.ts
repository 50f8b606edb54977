import { isIPv4, isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (with an embedded IPv4 tail expanded). */
function ipv6Groups(ip: string): number[] | undefined {
  let v = ip;
  const lastColon = v.lastIndexOf(':');
  const tail = v.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return undefined;
    const o = tail.split('.').map(Number) as [number, number, number, number];
    v = `${v.slice(0, lastColon + 1)}${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const halves = v.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  const groups = [...head, ...new Array<number>(Math.max(fill, 0)).fill(0), ...rest];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * The key a client address is limited under: an IPv4 address as is, an IPv6 address by its /64
 * (one subscriber usually holds a whole /64; `prefixGroups` 3 keys a whole /48 site), anything
 * else (unknown peer) as one shared key.
 */
export function addressKey(ip: string, prefixGroups: 3 | 4 = 4): string {
  if (isIPv4(ip)) return ip;
  if (isIPv6(ip)) {
    const groups = ipv6Groups(ip);
    if (groups) return `${groups.slice(0, prefixGroups).map((g) => g.toString(16)).join(':')}::/${prefixGroups * 16}`;
  }
  return 'unknown';
}
