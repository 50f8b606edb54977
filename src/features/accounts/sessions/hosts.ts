import type { Context } from 'hono';
import type { Config } from '../../../config.js';
import { clientIp } from '../../../http/client-ip.js';
import { requestHeader } from '../../../http/request-header.js';
import type { AppEnv } from '../../../http/env.js';

/** A host name without its port, lower-case: `Panel.Felis.Test:8443` → `panel.felis.test`. */
export function bareHost(host: string | undefined): string {
  if (!host) return '';
  const v = host.trim().toLowerCase();
  if (v.startsWith('[')) return v.slice(0, v.indexOf(']') + 1);
  const colon = v.indexOf(':');
  return colon === -1 ? v : v.slice(0, colon);
}

/** The host a request came to: its `Host` header, else the URL's host. */
export function requestHost(c: Context): string {
  return bareHost(requestHeader(c, 'host') ?? new URL(c.req.url).host);
}

export function isConsoleHost(config: Config, host: string): boolean {
  return config.consoleHost !== undefined && bareHost(config.consoleHost) === host;
}

/**
 * Whether staff pages answer on this host: the admin tier is served only on the console host
 * when one is configured (everywhere when none is).
 */
export function staffPagesHere(config: Config, host: string): boolean {
  return config.consoleHost === undefined || isConsoleHost(config, host);
}

/**
 * Where a sign-in comes from: the host a session is bound to, and the client it records. Read at
 * the edge, so that the services that open sessions take plain values.
 */
export interface SignInClient {
  host: string;
  userAgent?: string;
  clientIp: string;
}

export function signInClient<E extends AppEnv>(c: Context<E>): SignInClient {
  return { host: requestHost(c), userAgent: c.req.header('user-agent'), clientIp: clientIp(c) };
}
