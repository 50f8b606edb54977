import type { Context } from 'hono';
import type { Config } from '../../config.js';

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
  return bareHost(c.req.header('host') ?? new URL(c.req.url).host);
}

export function isConsoleHost(config: Config, host: string): boolean {
  return config.consoleHost !== undefined && bareHost(config.consoleHost) === host;
}
