import type { Context } from 'hono';
import { requestHeader } from './request-header.js';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whether an unsafe request came from a browser on another site (the front door then answers 403
 * cross_site before authentication). Hono's csrf() ignores JSON bodies, so the contract's rule is
 * checked here. Callers that send neither `Sec-Fetch-Site` nor `Origin` (the proxy, curl) pass.
 */
export function isCrossSite(c: Context): boolean {
  if (!UNSAFE.has(c.req.method)) return false;
  const site = requestHeader(c, 'sec-fetch-site')?.toLowerCase();
  if (site === 'same-site' || site === 'cross-site') return true;
  const origin = requestHeader(c, 'origin');
  return origin !== undefined && originHost(origin) !== requestHost(requestHeader(c, 'host'), c.req.url);
}

function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host.toLowerCase() : undefined;
  } catch {
    return undefined; // "null" and other opaque origins never match
  }
}

function requestHost(hostHeader: string | undefined, url: string): string {
  if (hostHeader) {
    try {
      return new URL(`http://${hostHeader}`).host.toLowerCase();
    } catch {
      return hostHeader.toLowerCase();
    }
  }
  return new URL(url).host.toLowerCase();
}
