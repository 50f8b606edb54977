import type { SessionSourceConfig } from '../../config.js';
import { SessionSourceHttp, type SourceResponse } from './http.js';

export interface HasJoinedQuery {
  username: string;
  serverId: string;
  ip?: string;
}

/** One configured identity source, as the verifier asks it. */
export interface SessionSource {
  readonly name: string;
  readonly primary: boolean;
  readonly prefix: string | undefined;
  /** `GET <url>/session/minecraft/hasJoined`: 200 profile, 204 not joined. */
  hasJoined(query: HasJoinedQuery): Promise<SourceResponse>;
}

export interface ProfileLookup {
  /** `GET <profile_url>/users/profiles/minecraft/<name>`: 200 taken, 204 or 404 free. */
  profileByName(name: string): Promise<SourceResponse>;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** A source asked at its full hasJoined `endpoint` (the settings page stores endpoints whole). */
export interface SourceEndpoint {
  name: string;
  primary: boolean;
  prefix: string | undefined;
  endpoint: string;
}

/** The client of one source, on a shared keep-alive client. */
export function httpSessionSource(client: SessionSourceHttp, source: SourceEndpoint): SessionSource {
  return {
    name: source.name,
    primary: source.primary,
    prefix: source.prefix,
    hasJoined(query) {
      const url = new URL(source.endpoint);
      url.searchParams.set('username', query.username);
      url.searchParams.set('serverId', query.serverId);
      if (query.ip !== undefined) url.searchParams.set('ip', query.ip);
      return client.get(url, [204]);
    },
  };
}

/** The HTTP clients of the configured sources, sharing one keep-alive client. */
export function createHttpSessionSources(configs: readonly SessionSourceConfig[], timeoutMs: number) {
  const client = new SessionSourceHttp(timeoutMs);
  const sources: SessionSource[] = configs.map((config) =>
    httpSessionSource(client, {
      name: config.name,
      primary: config.primary === true,
      prefix: config.prefix,
      endpoint: `${trimSlash(config.url)}/session/minecraft/hasJoined`,
    }),
  );
  const profileRoot = configs.find((c) => c.primary)?.profile_url;
  const profiles: ProfileLookup | undefined = profileRoot
    ? {
        profileByName: (name) =>
          client.get(new URL(`${trimSlash(profileRoot)}/users/profiles/minecraft/${encodeURIComponent(name)}`), [204, 404]),
      }
    : undefined;
  return { client, sources, profiles, close: () => client.close() };
}
