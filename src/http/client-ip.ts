import { isIP } from 'node:net';
import type { Context } from 'hono';
import type { AppEnv } from './env.js';

/**
 * The visitor's address: the header named by CLIENT_IP_HEADER when the edge sets one (its first
 * entry) when it holds an IP address, else the TCP peer. A header is never trusted unless configured.
 */
export function clientIp<E extends AppEnv>(c: Context<E>): string {
  const header = c.var.deps.config.clientIpHeader;
  if (header) {
    const value = c.req.header(header)?.split(',')[0]?.trim();
    // An unparseable header value falls back to the TCP peer (api-extensions): otherwise every
    // such visitor would share one limit, and a visitor could choose its own key.
    if (value && isIP(normalizeIp(value))) return normalizeIp(value);
  }
  const peer = c.env?.incoming?.socket?.remoteAddress ?? c.env?.requestIP?.(c.req.raw)?.address;
  return peer ? normalizeIp(peer) : '';
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; brackets and zone ids removed. */
export function normalizeIp(ip: string): string {
  let v = ip.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '').toLowerCase();
  if (v.startsWith('::ffff:') && v.includes('.')) v = v.slice(7);
  return v;
}
