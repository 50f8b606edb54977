import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type BlockList } from 'node:net';
import type { LookupFunction } from 'node:net';
import { DomainError } from '../../lib/errors.js';
import { networkList } from '../../lib/networks.js';

/** The networks WEBHOOK_FORBIDDEN_NETWORKS names, as a block list. */
export function forbiddenNetworks(cidrs: readonly string[]): BlockList {
  return networkList(cidrs);
}

/**
 * Whether an address is in a forbidden network. An IPv6 address that carries an IPv4 one (mapped
 * `::ffff:a.b.c.d`, SIIT `::ffff:0:a.b.c.d`, compatible `::a.b.c.d` (so `::` and `::1`), NAT64
 * `64:ff9b::/96`, 6to4 `2002:AABB:CCDD::/48`, a Teredo client) is also judged by that IPv4
 * address: a gateway or the host's own stack delivers it there.
 */
export function isForbidden(list: BlockList, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return list.check(address, 'ipv4');
  if (list.check(address, 'ipv6')) return true;
  return embeddedIpv4(address).some((v4) => list.check(v4, 'ipv4'));
}

/** The IPv4 addresses an IPv6 address carries, by the embeddings a route or a stack acts on. */
function embeddedIpv4(address: string): string[] {
  const g = ipv6Groups(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const found: string[] = [];
  // ::a.b.c.d, ::ffff:a.b.c.d, ::ffff:0:a.b.c.d
  if (zeros(0, 5) && (g[5] === 0 || g[5] === 0xffff)) found.push(v4(g[6]!, g[7]!));
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) found.push(v4(g[6]!, g[7]!));
  // NAT64's well-known prefix 64:ff9b::/96 (RFC 6052), and its local-use 64:ff9b:1::/48 with a /96 embedding.
  if (g[0] === 0x64 && g[1] === 0xff9b && (zeros(2, 6) || g[2] === 1)) found.push(v4(g[6]!, g[7]!));
  // 6to4: 2002:AABB:CCDD::/48.
  if (g[0] === 0x2002) found.push(v4(g[1]!, g[2]!));
  // Teredo 2001:0::/32: the server's address, and the client's, stored inverted.
  if (g[0] === 0x2001 && g[1] === 0) found.push(v4(g[2]!, g[3]!), v4(~g[6]! & 0xffff, ~g[7]! & 0xffff));
  return found;
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted IPv4 is two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const parse = (part: string) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * An endpoint URL as staff may set it: http(s), no credentials, and not a literal address in a
 * forbidden network (a name is checked where it resolves, at each delivery's connection).
 */
export function checkEndpointUrl(raw: string, forbidden: BlockList): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DomainError('bad_request', 'url must be an absolute http(s) URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DomainError('bad_request', 'url must be http or https.');
  if (url.username || url.password) throw new DomainError('bad_request', 'url must not carry credentials: the signature authenticates each delivery.');
  if (url.hash) throw new DomainError('bad_request', 'url must not carry a fragment.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isForbidden(forbidden, host)) throw new DomainError('bad_request', 'url points into a network WEBHOOK_FORBIDDEN_NETWORKS forbids.');
  return url.toString();
}

/** Thrown by the checked lookup: the name resolved into a forbidden network. */
export class ForbiddenDestinationError extends Error {
  override name = 'ForbiddenDestinationError';
}

/**
 * A DNS lookup for the HTTP client that refuses addresses in the forbidden networks: the check
 * applies to the address actually connected to, so a name that re-resolves (DNS rebinding) is
 * caught too.
 */
export function checkedLookup(forbidden: BlockList): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return (callback as (e: Error | null, a: LookupAddress[]) => void)(err, []);
      const allowed = addresses.filter((a) => !isForbidden(forbidden, a.address));
      if (allowed.length === 0) {
        return (callback as (e: Error | null, a: string, f: number) => void)(new ForbiddenDestinationError(`${hostname} resolves into a forbidden network`), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as (e: Error | null, a: LookupAddress[]) => void)(null, allowed);
      (callback as (e: Error | null, a: string, f: number) => void)(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}
