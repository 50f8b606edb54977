import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { DomainError } from '../../lib/errors.js';

/** The networks WEBHOOK_FORBIDDEN_NETWORKS names, as a block list. */
export function forbiddenNetworks(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/') as [string, string];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

export function isForbidden(list: BlockList, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is the IPv4 one.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return list.check(mapped[1]!, 'ipv4');
  return list.check(address, family === 6 ? 'ipv6' : 'ipv4');
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
