import type { FailureReason, SourceResponse } from '../../adapters/session-sources/http.js';
import type { SessionSourceHttp } from '../../adapters/session-sources/http.js';
import {
  createHttpSessionSources,
  httpSessionSource,
  type HasJoinedQuery,
  type SessionSource,
} from '../../adapters/session-sources/sources.js';
import type { SessionSourceConfig } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import type { Clock } from '../../lib/clock.js';
import { activeSources, readAuthSources } from '../runtime-settings/index.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { BarList } from './bar-list.js';
import { verifierMetrics, type SourceOutcome, type VerifierMetrics } from './metrics.js';
import { NameRegistry } from './name-registry.js';
import { parseUuid, thirdPartyUuid, undash } from './uuid.js';

export { BarList } from './bar-list.js';
export { thirdPartyUuid, sourceNamespace } from './uuid.js';

export const MAX_PARAM_BYTES = 64;
const PROFILE_NAME_MAX = 16;
const LEGAL_USERNAME = /^[A-Za-z0-9_]{3,16}$/;

export interface Profile {
  /** 32 hex digits, lowercase, undashed. */
  id: string;
  name: string;
  properties: unknown[];
}

/** What hasJoined answers: the profile, 204 (not admitted) or 503 (a source failed, none validated). */
export type Verdict = { status: 200; profile: Profile } | { status: 204 } | { status: 503 };

/** One source's answer, judged. `validated` and `refused` end the search at their priority. */
type Judged =
  | { kind: 'validated'; id: string; name: string; properties: unknown[] }
  | { kind: 'refused' }
  | { kind: 'not_validated' }
  | { kind: 'failed' };

export function isLegalUsername(name: string): boolean {
  return LEGAL_USERNAME.test(name);
}

/** `PREFIX_name`, cut to the 16 characters of a game name. */
export function prefixedName(prefix: string, name: string): string {
  return `${prefix}_${name}`.slice(0, PROFILE_NAME_MAX);
}

/**
 * The prefix of a source without a configured one: its name's letters and digits, at most 8 (the
 * configured prefix's own limit), so the result is still a legal game name.
 */
export function defaultPrefix(sourceName: string): string {
  return sourceName.replace(/[^A-Za-z0-9]/g, '').slice(0, 8) || 'tp';
}

export function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/**
 * The multi-source hasJoined. Every source is asked at once; the answer is decided as soon as the
 * highest-priority source that validates is known: a lower source's early success waits only for
 * the sources above it, and nothing waits for a source below the winner.
 */
/** The sources a login asks, in priority order; they may change while the service runs. */
export interface SourceSet {
  current(): Promise<readonly SessionSource[]> | readonly SessionSource[];
  /** A change was saved on this replica: read the list again before the next login. */
  invalidate(): void;
}

/** How long a replica trusts the list it read: a change saved on another replica is in force within this. */
export const SOURCES_REFRESH_MS = 5_000;

/**
 * The session sources as staff keep them on the settings page (the environment's SESSION_SOURCES
 * until they save a list), read from the database at most once per SOURCES_REFRESH_MS on each
 * replica, never once per login. Until the first read succeeds only the primary is asked, and a
 * failed read keeps the last list read: a database outage never brings back a source that was
 * disabled.
 */
export class StoredSources implements SourceSet {
  #sources: readonly SessionSource[];
  #revision: string | undefined;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly configured: readonly SessionSourceConfig[],
    private readonly client: SessionSourceHttp,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    const primary = activeSources(configured, { sources: [], revision: '0', managed: false })[0]!;
    this.#sources = [httpSessionSource(client, primary)];
  }

  async current(): Promise<readonly SessionSource[]> {
    if (this.clock.now().getTime() - this.#checkedAt >= SOURCES_REFRESH_MS) {
      this.#refreshing ??= this.#refresh().finally(() => (this.#refreshing = undefined));
      await this.#refreshing;
    }
    return this.#sources;
  }

  invalidate(): void {
    this.#checkedAt = Number.NEGATIVE_INFINITY;
  }

  async #refresh(): Promise<void> {
    try {
      const view = await readAuthSources(this.db, this.configured);
      if (view.revision !== this.#revision) {
        this.#sources = activeSources(this.configured, view).map((source) => httpSessionSource(this.client, source));
        this.#revision = view.revision;
      }
    } catch (err) {
      this.log.warn({ err }, 'session sources could not be read; the last list read stays in force');
    }
    this.#checkedAt = this.clock.now().getTime();
  }
}

export class SessionVerifier {
  constructor(
    private readonly sources: SourceSet,
    private readonly names: NameRegistry,
    readonly barList: BarList,
    private readonly metrics: VerifierMetrics,
    private readonly log: Logger,
    private readonly onClose: () => void = () => {},
  ) {}

  /**
   * Decides one login. Lower sources still running when the answer is known are left to finish
   * within their time-out, so their kept-alive connections survive and their outcomes are counted.
   * A failed bar-list lookup is logged with the request's id and refused as `internal`.
   */
  async verify(query: HasJoinedQuery, requestId: string | undefined): Promise<Verdict> {
    try {
      return await this.#decide(query);
    } catch (err) {
      this.log.error({ err, request_id: requestId }, 'hasJoined failed (bar-list lookup)');
      throw new DomainError('internal');
    }
  }

  /** A change to the sources was saved on this replica. */
  sourcesChanged(): void {
    this.sources.invalidate();
  }

  async #decide(query: HasJoinedQuery): Promise<Verdict> {
    const sources = await this.sources.current();
    const answers = sources.map((source) => this.#ask(source, query));
    const winner = await firstDecisive(answers);
    if (winner === undefined) {
      const all = await Promise.all(answers);
      return all.some((a) => a.judged.kind === 'failed') ? { status: 503 } : { status: 204 };
    }
    const { source, judged, nameTaken } = winner;
    if (judged.kind !== 'validated') return { status: 204 };
    const canonical = source.primary ? judged.id : thirdPartyUuid(source.name, judged.id);
    const [barred, taken] = await Promise.all([this.barList.has(canonical), nameTaken ?? false]);
    if (barred) return { status: 204 };
    const name = taken ? prefixedName(source.prefix ?? defaultPrefix(source.name), judged.name) : judged.name;
    return { status: 200, profile: { id: undash(canonical), name, properties: judged.properties } };
  }

  close(): void {
    this.onClose();
  }

  async #ask(source: SessionSource, query: HasJoinedQuery): Promise<Answer> {
    const started = performance.now();
    this.metrics.sourceRequests.inc({ source: source.name });
    const response = await source.hasJoined(query);
    const [judged, outcome] = judge(source, response);
    if (response.kind === 'failed' || outcome === 'failed_profile' || outcome === 'unparseable_id') {
      this.log.warn(
        { source: source.name, outcome, detail: response.kind === 'failed' ? response.detail : undefined },
        'session source gave no usable answer',
      );
    }
    const labels = { source: source.name, outcome };
    this.metrics.sourceOutcomes.inc(labels);
    this.metrics.sourceDuration.observe(labels, (performance.now() - started) / 1000);
    // A third-party success asks the primary about its name at once, while the sources above
    // it may still be answering (the lookup is cached and never rejects).
    const nameTaken =
      judged.kind === 'validated' && !source.primary ? this.names.isTaken(judged.name) : undefined;
    return { source, judged, nameTaken };
  }
}

interface Answer {
  source: SessionSource;
  judged: Judged;
  nameTaken: Promise<boolean> | undefined;
}

const FAILED_OUTCOME: Record<FailureReason, SourceOutcome> = {
  transport: 'failed_transport',
  timeout: 'failed_timeout',
  redirect: 'failed_redirect',
  status: 'failed_status',
  malformed: 'failed_malformed',
};

/**
 * A source's answer by the contract's rules. A usable profile is a JSON object with a string `id`
 * and `name` and, when present, an array `properties` (passed through untouched). A primary id
 * that does not parse is the contract's 204; from another source it is a profile we cannot use, a
 * failure. A third-party name that is not a legal game name is decisive too: that source did
 * validate the player, who is then refused (204) rather than handed to a lower source.
 */
function judge(source: SessionSource, response: SourceResponse): [Judged, SourceOutcome] {
  if (response.kind === 'failed') return [{ kind: 'failed' }, FAILED_OUTCOME[response.reason]];
  if (response.kind === 'empty') return [{ kind: 'not_validated' }, 'not_validated'];
  const body = response.body as { id?: unknown; name?: unknown; properties?: unknown } | null;
  const usable =
    response.status === 200 &&
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    typeof body.id === 'string' &&
    typeof body.name === 'string' &&
    body.name.length > 0 &&
    (body.properties === undefined || Array.isArray(body.properties));
  if (!usable) return [{ kind: 'failed' }, 'failed_profile'];
  const id = parseUuid(body.id as string);
  if (id === undefined) {
    return source.primary ? [{ kind: 'refused' }, 'unparseable_id'] : [{ kind: 'failed' }, 'failed_profile'];
  }
  const name = body.name as string;
  if (!source.primary && !isLegalUsername(name)) return [{ kind: 'refused' }, 'validated'];
  return [{ kind: 'validated', id, name, properties: (body.properties as unknown[] | undefined) ?? [] }, 'validated'];
}

const isDecisive = (j: Judged) => j.kind === 'validated' || j.kind === 'refused';

/**
 * The first decisive answer in priority order, as soon as every source above it has answered
 * otherwise; undefined when no source is decisive (known only once all have answered).
 */
function firstDecisive(answers: readonly Promise<Answer>[]): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    const settled: Array<Answer | undefined> = new Array(answers.length);
    let next = 0;
    const advance = () => {
      while (next < answers.length) {
        const answer = settled[next];
        if (answer === undefined) return;
        if (isDecisive(answer.judged)) return resolve(answer);
        next += 1;
      }
      resolve(undefined);
    };
    answers.forEach((promise, i) =>
      promise.then((answer) => {
        settled[i] = answer;
        advance();
      }),
    );
    if (answers.length === 0) resolve(undefined);
  });
}

/** The verifier of the configured sources, with its keep-alive client and name cache. */
export function createSessionVerifier(
  deps: Pick<Deps, 'config' | 'clock' | 'metrics' | 'log' | 'database'>,
): SessionVerifier {
  const { client, profiles, close } = createHttpSessionSources(
    deps.config.sessionSources,
    deps.config.sessionSourceTimeoutMs,
  );
  const sources = new StoredSources(deps.database.db, deps.config.sessionSources, client, deps.clock, deps.log);
  const metrics = verifierMetrics(deps.metrics.registry);
  const names = new NameRegistry(profiles, deps.clock, metrics, deps.log);
  const barList = new BarList(deps.database.db, deps.clock, deps.log);
  return new SessionVerifier(sources, names, barList, metrics, deps.log, close);
}

/** The verifier feature's part of the service. */
export interface VerifierParts {
  /** The hasJoined verifier (keep-alive clients to the session sources, name cache, bar-list snapshot). */
  sessionVerifier: SessionVerifier;
}
