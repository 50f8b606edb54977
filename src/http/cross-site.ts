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
  // An API key (issue 42) is no ambient credential: a browser never attaches an Authorization
  // header to another site's request without a CORS preflight, which this service never grants,
  // and a request with a bearer is judged by its key alone (its cookie is not read).
  if (/^bearer felis_/i.test(requestHeader(c, 'authorization') ?? '')) return false;
  const site = requestHeader(c, 'sec-fetch-site')?.toLowerCase();
  if (site === 'same-site' || site === 'cross-site') return true;
  const origin = requestHeader(c, 'origin');
  return origin !== undefined && !sameHost(origin, requestHeader(c, 'host') ?? new URL(c.req.url).host);
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[^:\[\]]+)(?::(\d{1,5}))?$/i;
const bareName = (name: string) => name.toLowerCase().replace(/\.+$/, '');

/**
 * Whether an Origin names the host the request was sent to. Names compare without case and without
 * a trailing dot; ports compare as numbers, a port left out meaning the origin scheme's default (the
 * edge may or may not pass `:443` on). "null" and other opaque origins never match.
 */
export function sameHost(origin: string, hostHeader: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const defaultPort = DEFAULT_PORT[url.protocol];
  const host = HOST_HEADER.exec(hostHeader.trim());
  if (!defaultPort || !host) return false;
  const originPort = url.port || defaultPort;
  const requestPort = host[2] === undefined ? defaultPort : String(Number(host[2]));
  return bareName(url.hostname) === bareName(host[1]!) && originPort === requestPort;
}
