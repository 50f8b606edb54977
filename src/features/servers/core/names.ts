/**
 * Reserved names of the platform's system services (login gate, lobby, limbo). Every per-server
 * route answers 404 for them and create refuses them, so a player can never wake, stop or claim one.
 */
export const RESERVED_SERVER_NAMES: ReadonlySet<string> = new Set(['login', 'lobby', 'limbo']);

export function isReservedServerName(name: string): boolean {
  return RESERVED_SERVER_NAMES.has(name.toLowerCase());
}

/** A DNS label (the server's resource name and its subdomain): 1 to 40 of a-z, 0-9 and inner `-`. */
export const SERVER_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

/**
 * The connecting hostname as the proxy passes it, normalized: lower case, without a port and
 * without the trailing dot of a fully qualified name.
 */
export function normalizeHost(host: string): string {
  let h = host;
  const colon = h.lastIndexOf(':');
  if (colon !== -1 && h.indexOf(':') === colon) h = h.slice(0, colon); // one colon: a port, not IPv6
  while (h.endsWith('.')) h = h.slice(0, -1);
  return h.toLowerCase();
}
