import { isIP } from 'node:net';
import type { Context } from 'hono';
import { inNetworks } from '../lib/networks.js';
import type { AppEnv } from './env.js';

/**
 * The visitor's address: the header named by CLIENT_IP_HEADER when the edge sets one (its first
 * entry) when it holds an IP address, else the TCP peer. A header is never trusted unless
 * configured, and with TRUSTED_PROXIES only from those peers: anyone else reaching the service
 * directly is its own visitor, whatever header it sends.
 */
export function clientIp<E extends AppEnv>(c: Context<E>): string {
  const { clientIpHeader: header, trustedProxies } = c.var.deps.config;
  const raw = c.env?.incoming?.socket?.remoteAddress ?? c.env?.requestIP?.(c.req.raw)?.address;
  const peer = raw ? normalizeIp(raw) : '';
  if (header && (!trustedProxies || inNetworks(trustedProxies, peer))) {
    const value = c.req.header(header)?.split(',')[0]?.trim();
    // An unparseable header value falls back to the TCP peer (api-extensions): otherwise every
    // such visitor would share one limit, and a visitor could choose its own key.
    if (value && isIP(normalizeIp(value))) return normalizeIp(value);
  }
  return peer;
}

/**
 * One spelling per address, so that a limit keyed on it is one bucket whatever form the header
 * carried: the WHATWG URL host parser reads IPv4 in every form it accepts (the integer
 * `3405803783`, hex parts, with a `:port`; decimal parts with leading zeros, `203.000.113.007`, as decimal) and writes IPv6 canonically (`[2001:0DB8::0001]:443` →
 * `2001:db8::1`); an IPv4-mapped IPv6 address, dotted or hex (`::ffff:cb00:7107`), is its IPv4
 * address; a zone id is dropped. Anything else comes back trimmed and lower-cased (not an IP).
 */
export function normalizeIp(ip: string): string {
  let v = ip.trim().replace(/%[^\]]*/, '').toLowerCase();
  // Only what an address (with brackets, a port, a hex or an integer part) is spelled with: no
  // user, path or name reaches the URL parser.
  if (!/^[0-9a-fx.:[\]]+$/.test(v)) return v;
  // Decimal parts with leading zeros are read as decimal (`010.060.000.001` is 10.60.0.1, as
  // people and proxies write it), not as the URL parser's octal: one bucket per address (issue 43).
  const v4 = /^([\d.]+)(:\d+)?$/.exec(v);
  if (v4) v = v4[1]!.replace(/(^|\.)0+(?=\d)/g, '$1') + (v4[2] ?? '');
  const host = v.startsWith('[') || v.split(':').length <= 2 ? v : `[${v}]`;
  let parsed: string;
  try {
    parsed = new URL(`http://${host}/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return v;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(parsed);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return parsed;
}
