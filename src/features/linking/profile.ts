import { SessionSourceHttp } from '../../adapters/session-sources/http.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { insertLink, isStaffRole, linkOf, requireReauth } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { activeSources, readAuthSources, type ActiveSource } from '../runtime-settings/index.js';
import { isLegalUsername, parseUuid, thirdPartyUuid } from '../verifier/index.js';
import { lockUuid } from './service.js';
import type { AuthSource } from './uuid.js';

/**
 * Looking up a game profile at one of the configured session sources and linking it to the
 * signed-in staff account (the original's role designation): a staff tool, not a proof that the
 * caller owns the game account, so players are refused and a link needs a fresh reauth proof.
 */

type ProfileDeps = Pick<Deps, 'database' | 'config' | 'log'>;

const HAS_JOINED_SUFFIX = '/sessionserver/session/minecraft/hasJoined';
const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** The root of a third-party source's profile API: its `api_url`, else its hasJoined URL without the usual path. */
function profileApiBase(source: ActiveSource): string | undefined {
  if (source.apiUrl !== '') return trimSlash(source.apiUrl);
  return source.endpoint.endsWith(HAS_JOINED_SUFFIX) ? source.endpoint.slice(0, -HAS_JOINED_SUFFIX.length) : undefined;
}

async function sourcesInForce(deps: ProfileDeps): Promise<ActiveSource[]> {
  return activeSources(deps.config.sessionSources, await readAuthSources(deps.database.db, deps.config.sessionSources));
}

/**
 * Every source a login asks, and whether a profile can be looked up there (no URL is shown). For
 * staff, as the original's route table says: it serves the staff's look-up and link.
 */
export async function linkSources(deps: ProfileDeps, session: SessionContext): Promise<Array<{ tag: string; lookup_available: boolean }>> {
  requireStaff(session);
  return (await sourcesInForce(deps)).map((s) => ({ tag: s.name, lookup_available: s.primary || profileApiBase(s) !== undefined }));
}

export interface LinkedProfile {
  source: string;
  name: string;
  profile_uuid: string;
  mc_uuid: string;
  auth_source: AuthSource;
}

function requireStaff(session: SessionContext): void {
  if (!isStaffRole(session.role)) throw new DomainError('forbidden', 'Looking up and designating game profiles is for staff.');
}

const unavailable = (detail: string) => new DomainError('auth_source_unavailable', `The selected session source ${detail}.`);

/**
 * One profile by name or UUID at the named source: 400 for input that is neither, an unknown
 * source or one without a profile API; 404 when the source knows no such player; 503 when it
 * cannot be asked or answers something unusable. The answer carries the canonical UUID a login
 * through that source would give (the verifier's own derivation).
 */
export async function lookupProfile(deps: ProfileDeps, session: SessionContext, sourceTag: string, rawInput: string): Promise<LinkedProfile> {
  requireStaff(session);
  const input = rawInput.trim();
  const asUuid = parseUuid(input);
  if (asUuid === undefined && !isLegalUsername(input)) throw new DomainError('bad_request', 'Provide a Minecraft player name or UUID.');
  const source = (await sourcesInForce(deps)).find((s) => s.name === sourceTag);
  if (!source) throw new DomainError('auth_source_unknown', 'Select a configured session source.');
  let request: { url: URL; method: 'GET' | 'POST'; json?: unknown };
  const undashed = asUuid?.replaceAll('-', '');
  if (source.primary) {
    if (undashed) request = { url: new URL(`${source.endpoint.slice(0, -'/hasJoined'.length)}/profile/${undashed}`), method: 'GET' };
    else if (source.apiUrl !== '') request = { url: new URL(`${trimSlash(source.apiUrl)}/users/profiles/minecraft/${encodeURIComponent(input)}`), method: 'GET' };
    else throw new DomainError('auth_source_lookup_unsupported', 'The primary source has no name look-up configured (profile_url); look it up by UUID.');
  } else {
    const base = profileApiBase(source);
    if (!base) throw new DomainError('auth_source_lookup_unsupported', 'This source needs api_url for a profile look-up; linking by a code from the game still works.');
    request = undashed
      ? { url: new URL(`${base}/sessionserver/session/minecraft/profile/${undashed}`), method: 'GET' }
      : { url: new URL(`${base}/api/profiles/minecraft`), method: 'POST', json: [input] };
  }
  const client = new SessionSourceHttp(deps.config.sessionSourceTimeoutMs);
  let answer;
  try {
    answer = await client.request(request.url, { method: request.method, json: request.json });
  } finally {
    client.close();
  }
  if (answer.kind === 'failed') {
    deps.log.info({ source: source.name, reason: answer.reason, detail: answer.detail }, 'profile look-up failed');
    throw unavailable('is unavailable');
  }
  if (answer.status === 204 || answer.status === 404) throw new DomainError('minecraft_profile_not_found', 'No player matched in the selected source.');
  if (answer.status !== 200) throw unavailable(`answered HTTP ${answer.status}`);
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw unavailable('gave an invalid profile answer');
  }
  const candidates = (Array.isArray(body) ? body : [body]) as Array<{ id?: unknown; name?: unknown } | null>;
  const profile = request.method === 'POST'
    ? candidates.find((c) => typeof c?.name === 'string' && c.name.toLowerCase() === input.toLowerCase())
    : candidates[0];
  if (request.method === 'POST' && !profile) throw new DomainError('minecraft_profile_not_found', 'No player matched in the selected source.');
  const id = typeof profile?.id === 'string' ? parseUuid(profile.id) : undefined;
  const name = typeof profile?.name === 'string' ? profile.name : '';
  if (!id || !isLegalUsername(name) || (asUuid !== undefined && id !== asUuid) || (asUuid === undefined && name.toLowerCase() !== input.toLowerCase())) {
    throw unavailable('returned a mismatched or invalid player');
  }
  return {
    source: source.name,
    name,
    profile_uuid: profile!.id as string,
    mc_uuid: source.primary ? id : thirdPartyUuid(source.name, id),
    auth_source: source.primary ? 'primary' : 'thirdparty',
  };
}

/**
 * Links the profile a source names to the caller's own account (idempotent; 409 already_linked when
 * another account holds it). The caller names only the source and the source's UUID: the account
 * is the session's and the canonical UUID is derived here. Needs a fresh reauth proof. Audited.
 */
export async function linkProfile(
  deps: ProfileDeps & Pick<Deps, 'clock'>,
  session: SessionContext,
  input: { source: string; profile_uuid: string },
  requestId: string | undefined,
): Promise<{ linked: true; mc_uuid: string; auth_source: AuthSource }> {
  requireStaff(session);
  await requireReauth(deps, session);
  if (parseUuid(input.profile_uuid.trim()) === undefined) throw new DomainError('bad_request', 'profile_uuid must be a player UUID.');
  const profile = await lookupProfile(deps, session, input.source, input.profile_uuid);
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    await lockUuid(tx, profile.mc_uuid);
    const existing = await linkOf(tx, profile.mc_uuid);
    if (existing && existing.userId !== session.userId) {
      throw new DomainError('already_linked', 'That Minecraft player is linked to another account.');
    }
    if (existing) return;
    await insertLink(tx, session.userId, profile.mc_uuid, profile.auth_source, now);
    await writeAudit(tx, { at: now, actor: session, action: 'account.link_profile', target: session.userId, detail: { mc_uuid: profile.mc_uuid, source: profile.source }, requestId: requestId ?? null });
  });
  return { linked: true, mc_uuid: profile.mc_uuid, auth_source: profile.auth_source };
}
