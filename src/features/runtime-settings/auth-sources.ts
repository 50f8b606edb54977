import { isIP } from 'node:net';
import { z } from '@hono/zod-openapi';
import type { SessionSourceConfig } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import { readStored, revisionText } from './revisioned.js';

export const AUTH_SOURCES_KEY = 'auth_sources';
export const MAX_AUTH_SOURCES = 32;
const HAS_JOINED_SUFFIX = '/session/minecraft/hasJoined';

/**
 * One session source after the primary, as the original's settings page edits it: `tag` names the
 * source's UUID namespace (permanent: every player UUID of the source is derived from it), `prefix`
 * renames its players whose name is taken at the primary, `url` is the full hasJoined endpoint,
 * `api_url` the root of its profile API (optional), `enabled` whether logins ask it.
 */
export const AuthSourceEntrySchema = z
  .strictObject({
    tag: z.string().max(64),
    prefix: z.string().max(16),
    url: z.string().max(2048),
    api_url: z.string().max(2048).default(''),
    enabled: z.boolean().default(false),
  })
  .openapi('AuthSourceConfig');
export type AuthSourceEntry = z.infer<typeof AuthSourceEntrySchema>;

const TAG = /^[A-Za-z0-9_.-]{1,32}$/;
/** Our SESSION_SOURCES allows 8; the prefix plus `_` and a name is cut to 16 characters. */
const PREFIX = /^[A-Za-z0-9]{1,8}$/;

/** Plain HTTP only to this host or a private address: anywhere else anyone on the path could answer as any player. */
function plaintextHostOk(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  const family = isIP(host);
  if (family === 4) {
    const [a, b] = host.split('.').map(Number) as [number, number];
    return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
  }
  if (family === 6) return host === '::1' || /^f[cd]/.test(host);
  return false;
}

/**
 * Why `value` cannot be an address the service calls, or undefined when it can: http(s) only,
 * with a host, no credentials, no query or fragment (the parameters are appended to it), no
 * white space, and plain HTTP only to a local or private address.
 */
export function outsideUrlProblem(value: string): string | undefined {
  if (value.trim() !== value || /\s/.test(value)) return 'must not hold white space';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.hostname === '') return 'has no host';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (value.includes('?') || value.includes('#')) return 'must not carry a query or fragment';
  if (url.protocol === 'http:' && !plaintextHostOk(url.hostname)) return 'must be https:// (http:// only for a local or private address)';
  return undefined;
}

/** Why a list cannot be saved, or undefined when it can (the original's rules; `primaryTag` is the built-in first source). */
export function authSourcesProblem(entries: readonly AuthSourceEntry[], primaryTag: string): string | undefined {
  if (entries.length > MAX_AUTH_SOURCES) return `provide at most ${MAX_AUTH_SOURCES} sources`;
  const tags = new Set<string>();
  const prefixes = new Set<string>();
  for (const [i, s] of entries.entries()) {
    if (!TAG.test(s.tag)) return `source #${i + 1}: the tag must be 1 to 32 letters, digits, '.', '_' or '-'`;
    const folded = s.tag.toLowerCase();
    if (folded === 'mojang' || folded === primaryTag.toLowerCase()) return `source #${i + 1}: the tag ${s.tag} is the built-in primary's`;
    if (tags.has(s.tag)) return `the tag ${s.tag} is used twice`;
    tags.add(s.tag);
    if (!PREFIX.test(s.prefix)) return `source ${s.tag}: the prefix must be 1 to 8 letters or digits`;
    if (prefixes.has(s.prefix.toLowerCase())) return `the prefix ${s.prefix} is used twice`;
    prefixes.add(s.prefix.toLowerCase());
    const urlProblem = outsideUrlProblem(s.url);
    if (urlProblem) return `source ${s.tag}: url ${urlProblem}`;
    if (s.api_url !== '') {
      const apiProblem = outsideUrlProblem(s.api_url);
      if (apiProblem) return `source ${s.tag}: api_url ${apiProblem}`;
    }
  }
  return undefined;
}

export interface AuthSourcesView {
  sources: AuthSourceEntry[];
  revision: string;
  /** True once the list is stored (staff manage it); false while it is the environment's SESSION_SOURCES (the original's meaning). */
  managed: boolean;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** The environment's sources after the primary, as the page shows them before anything is saved. */
export function seededAuthSources(configured: readonly SessionSourceConfig[]): AuthSourceEntry[] {
  return configured
    .filter((c) => !c.primary)
    .map((c) => ({
      tag: c.name,
      prefix: c.prefix ?? (c.name.replace(/[^A-Za-z0-9]/g, '').slice(0, 8) || 'tp'),
      url: `${trimSlash(c.url)}${HAS_JOINED_SUFFIX}`,
      api_url: c.profile_url ?? '',
      enabled: true,
    }));
}

/** The primary source of the environment (always first, never edited here). */
export function primarySource(configured: readonly SessionSourceConfig[]): SessionSourceConfig {
  return configured.find((c) => c.primary) ?? configured[0]!;
}

/** The list in force and its revision. A stored list that no longer passes the rules fails closed (an error, never the environment's). */
export async function readAuthSources(db: Queryable, configured: readonly SessionSourceConfig[]): Promise<AuthSourcesView> {
  const stored = await readStored(db, AUTH_SOURCES_KEY);
  if (!stored) return { sources: seededAuthSources(configured), revision: revisionText(stored), managed: false };
  const parsed = z.array(AuthSourceEntrySchema).safeParse(stored.value);
  if (!parsed.success || authSourcesProblem(parsed.data, primarySource(configured).name) !== undefined) {
    throw new Error('the stored session sources are invalid');
  }
  return { sources: parsed.data, revision: revisionText(stored), managed: true };
}

/**
 * The sources a login asks, in order: the environment's primary, then the enabled entries. The
 * entry's `url` is the full hasJoined endpoint; `SessionSourceConfig.url` is the root it hangs from,
 * so an endpoint that does not end in the usual path is kept whole (`endpoint`).
 */
export interface ActiveSource {
  name: string;
  primary: boolean;
  prefix: string | undefined;
  endpoint: string;
  apiUrl: string;
}

export function activeSources(configured: readonly SessionSourceConfig[], view: AuthSourcesView): ActiveSource[] {
  const primary = primarySource(configured);
  return [
    { name: primary.name, primary: true, prefix: primary.prefix, endpoint: `${trimSlash(primary.url)}${HAS_JOINED_SUFFIX}`, apiUrl: primary.profile_url ?? '' },
    ...view.sources
      .filter((s) => s.enabled)
      .map((s) => ({ name: s.tag, primary: false, prefix: s.prefix, endpoint: s.url, apiUrl: s.api_url })),
  ];
}
