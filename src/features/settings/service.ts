import { SessionSourceHttp } from '../../adapters/session-sources/http.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError, type ErrorCode } from '../../lib/errors.js';
import { requireReauth } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { isReservedServerName, requireServer, SERVER_NAME_PATTERN, wakePolicyInForce, type WakePolicyView } from '../servers/index.js';
import {
  AUTH_SOURCES_KEY,
  authSourcesProblem,
  compareAndSet,
  ENTRY_POLICY_KEY,
  entryPolicyProblem,
  parseRevision,
  primarySource,
  readAuthSources,
  readEntryPolicy,
  WAKE_POLICY_KEY,
  type AuthSourceEntry,
  type AuthSourcesView,
  type EntryPolicy,
  type EntryPolicyView,
  type WakePolicy,
} from '../runtime-settings/index.js';
import type { VerifierParts } from '../verifier/index.js';
import type { ServersParts } from '../servers/index.js';

type SettingsDeps = Pick<Deps, 'database' | 'clock' | 'cluster' | 'config' | 'log'> & ServersParts;

/** A server players may be sent to: a well-formed name that is not a platform server (the original's rule). */
export const isTargetName = (name: string) => SERVER_NAME_PATTERN.test(name) && !isReservedServerName(name);

/** The platform's own settings are the owner's (as the original: an admin is refused too). */
function requireOwner(session: SessionContext): void {
  if (session.role !== 'owner') throw new DomainError('forbidden', 'Only the owner changes the platform settings.');
}

/** A stored setting that no longer parses is a fault of ours: logged, and answered 500 rather than replaced by a default. */
async function readOrFail<T>(deps: Pick<Deps, 'log'>, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    deps.log.error({ err }, 'a stored platform setting is invalid');
    throw new DomainError('internal');
  }
}

/** The entry policy in force: for the proxy and the limbo (no session), or for the owner's page. */
export function entryPolicy(deps: SettingsDeps, session?: SessionContext): Promise<EntryPolicyView> {
  if (session) requireOwner(session);
  return readOrFail(deps, () => readEntryPolicy(deps.database.db, isTargetName));
}

/**
 * Saves the entry policy if it is still at `revision`: its rules (400), its target servers (404),
 * then the revision (409 `conflict`), after a fresh reauth proof. Audited.
 */
export async function saveEntryPolicy(
  deps: SettingsDeps,
  session: SessionContext,
  body: EntryPolicy & { revision: string },
  requestId: string | undefined,
): Promise<EntryPolicyView> {
  requireOwner(session);
  await requireReauth(deps, session);
  const { revision, ...policy } = body;
  const problem = entryPolicyProblem(policy, isTargetName);
  if (problem) throw new DomainError('bad_request', `invalid entry mode, target or offline policy: ${problem}`);
  for (const name of [policy.defaultServer, policy.fallbackServer]) if (name !== '') await requireServer(deps, name);
  const current = await entryPolicy(deps);
  await saveRevisioned(deps, session, { key: ENTRY_POLICY_KEY, value: policy, named: revision, current: current.revision, conflict: 'conflict', action: 'platform.entry_policy', requestId });
  return entryPolicy(deps);
}

export function wakePolicy(deps: SettingsDeps, session?: SessionContext): Promise<WakePolicyView> {
  if (session) requireOwner(session);
  return readOrFail(deps, () => wakePolicyInForce(deps.database.db));
}

/** Saves the wake policy if it is still at `revision` (409 `conflict`), after a fresh reauth proof. Audited. */
export async function saveWakePolicy(
  deps: SettingsDeps,
  session: SessionContext,
  body: WakePolicy & { revision: string },
  requestId: string | undefined,
): Promise<WakePolicyView> {
  requireOwner(session);
  await requireReauth(deps, session);
  const { revision, ...policy } = body;
  const current = await wakePolicy(deps);
  await saveRevisioned(deps, session, { key: WAKE_POLICY_KEY, value: policy, named: revision, current: current.revision, conflict: 'conflict', action: 'platform.wake_policy', requestId });
  return wakePolicy(deps);
}

export function authSources(deps: SettingsDeps, session?: SessionContext): Promise<AuthSourcesView> {
  if (session) requireOwner(session);
  return readOrFail(deps, () => readAuthSources(deps.database.db, deps.config.sessionSources));
}

/**
 * Saves the ordered session sources if they are still at `revision` (409 `auth_sources_changed`).
 * A tag once in the list stays: it is the namespace of its players' UUIDs, so a source is disabled,
 * never removed or renamed (409 `auth_source_tag_locked`). The verifier of this replica reads the
 * list again before its next login; the others within their refresh interval.
 */
export async function saveAuthSources(
  deps: SettingsDeps & Pick<Deps & VerifierParts, 'sessionVerifier'>,
  session: SessionContext,
  body: { sources: AuthSourceEntry[]; revision: string },
  requestId: string | undefined,
): Promise<AuthSourcesView> {
  requireOwner(session);
  await requireReauth(deps, session);
  const problem = authSourcesProblem(body.sources, primarySource(deps.config.sessionSources).name);
  if (problem) throw new DomainError('bad_request', problem);
  const current = await authSources(deps);
  if (body.revision !== current.revision) throw new DomainError('auth_sources_changed', 'The session sources changed; reload before saving.');
  const tags = new Set(body.sources.map((s) => s.tag));
  if (current.sources.some((s) => !tags.has(s.tag))) {
    throw new DomainError('auth_source_tag_locked', 'Saved source tags are permanent; disable a source instead of removing or renaming it.');
  }
  await saveRevisioned(deps, session, { key: AUTH_SOURCES_KEY, value: body.sources, named: body.revision, current: current.revision, conflict: 'auth_sources_changed', action: 'auth_sources.updated', requestId });
  deps.sessionVerifier.sourcesChanged();
  return authSources(deps);
}

interface RevisionedWrite {
  key: string;
  value: unknown;
  named: string;
  current: string;
  conflict: ErrorCode;
  action: string;
  requestId: string | undefined;
}

/** Compare-and-set with its audit row in one transaction; a revision that moved on is `conflict`. */
async function saveRevisioned(deps: SettingsDeps, session: SessionContext, write: RevisionedWrite): Promise<void> {
  const expected = parseRevision(write.named);
  const stale = () => new DomainError(write.conflict, 'The setting changed since it was read; reload before saving.');
  if (expected === undefined || write.named !== write.current) throw stale();
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    if ((await compareAndSet(tx, write.key, expected, write.value, now)) === undefined) throw stale();
    await writeAudit(tx, { at: now, actor: session.userId, action: write.action, target: 'platform', detail: { setting: write.key }, requestId: write.requestId ?? null });
  });
}

/** The answer of a test call: whether the source answered as a healthy one (204 for a serverId nobody joined). */
export interface SourceTest {
  ok: boolean;
  status: number;
  elapsed_ms: number;
}

/**
 * Asks one source, as the settings page describes it, whether a fresh random serverId joined: a
 * healthy hasJoined answers 204. The URL was checked as an outside address (http(s), no
 * credentials, no query); the call has the verifier's time-out, follows no redirect and reads at
 * most the verifier's answer size. Nothing is stored.
 */
export async function testAuthSource(deps: Pick<Deps, 'config' | 'log' | 'random'>, session: SessionContext, source: AuthSourceEntry): Promise<SourceTest> {
  requireOwner(session);
  const problem = authSourcesProblem([source], primarySource(deps.config.sessionSources).name);
  if (problem) throw new DomainError('bad_request', problem);
  const url = new URL(source.url);
  url.searchParams.set('username', 'FelisProbe');
  url.searchParams.set('serverId', Buffer.from(deps.random.bytes(16)).toString('hex'));
  const client = new SessionSourceHttp(deps.config.sessionSourceTimeoutMs);
  const started = performance.now();
  try {
    const answer = await client.request(url);
    if (answer.kind === 'failed') {
      deps.log.info({ source: source.tag, reason: answer.reason, detail: answer.detail }, 'session source test failed');
      throw new DomainError('auth_source_unavailable', 'The session source could not be reached.');
    }
    return { ok: answer.status === 204, status: answer.status, elapsed_ms: Math.max(0, Math.round(performance.now() - started)) };
  } finally {
    client.close();
  }
}
