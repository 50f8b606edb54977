import { eq, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import type { ChangeFeed } from '../../db/change-feed.js';
import type { Database } from '../../db/client.js';
import { sessions, users } from '../../db/schema/accounts.js';
import { refuseUnfinishedSetup, SIGNED_IN_USER_COLUMNS, signedInAccountOf, type SignedInAccount } from './users.js';
import type { AppEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import type { SessionAuthenticator, SessionContext, TierRequirement } from '../../http/session.js';
import { sha256Hex } from '../../lib/secrets.js';
import { isConsoleHost, requestHost } from './sessions/index.js';
import { isStaffRole } from './roles.js';
import { authenticateKey, presentedKey, type KeyChecks } from './api-keys.js';
import { clearSessionCookie, sessionToken, setSessionCookie } from './sessions/index.js';
import { LAST_SEEN_WRITE_MS, SESSION_TTL_MS, STAFF_IDLE_MS, touchSession } from './sessions/index.js';

/** A session of a staff member that has been idle too long no longer counts as live. */
export function isIdleStaffSession(role: string, lastSeenAt: Date, now: Date): boolean {
  return isStaffRole(role) && now.getTime() - lastSeenAt.getTime() >= STAFF_IDLE_MS;
}

const unauthorized = () => new DomainError('unauthorized', 'A signed-in session is required.');

/**
 * The session check's one indexed query (session by token hash, joined to its user), prepared once
 * per database: building it with the query builder on every signed-in request cost more than the
 * query. It reads the account's own fields as well, so `/me` needs no second query.
 */
function sessionQueryOf(db: Database) {
  return db
    .select({
      host: sessions.host,
      expiresAt: sessions.expiresAt,
      lastSeenAt: sessions.lastSeenAt,
      revokedAt: sessions.revokedAt,
      ...SIGNED_IN_USER_COLUMNS,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.tokenHash, sql.placeholder('tokenHash')))
    .limit(1)
    .prepare('felis_session_by_token');
}
type SessionQuery = ReturnType<typeof sessionQueryOf>;
type SessionRow = Awaited<ReturnType<SessionQuery['execute']>>[number];

/** How many session checks one replica keeps; past it the oldest goes. */
const SESSION_CACHE_ENTRIES = 10_000;

/**
 * The rows of the session checks that passed, by token hash, each with when it was read (monotonic
 * ms): a signed-in request whose row is cached costs no query. Every check still runs on the row
 * against the request (expiry, host, role, tier, setup, idle); only the read is saved. What keeps
 * revocation sound:
 * - on this replica, every answered write request forgets everything (src/http/pipeline.ts), and a
 *   read that was in flight across a forget is not kept (the epoch), so a sign-out, revoke,
 *   disable or role change counts from the next request;
 * - another replica's change reaches this one through the database's change feed
 *   (src/db/change-feed.ts: a trigger's NOTIFY, LISTENed to), which forgets everything; cached
 *   rows are used only while the feed can say that every change committed more than
 *   `SESSION_CACHE_MS` (≤ 1 s) ago has been delivered. Without a feed (the tests' in-process
 *   PGlite), a row is used for at most `SESSION_CACHE_MS` after its read;
 * - a row whose `last_seen_at` is a minute old is read again before use, so staff idle time and
 *   the once-a-minute `last_seen_at` write are judged on the database's row, as without a cache.
 */
class SessionCache {
  #rows = new Map<string, { row: SessionRow; readAt: number }>();
  #epoch = 0;

  get epoch(): number {
    return this.#epoch;
  }

  constructor(readonly feed: ChangeFeed | undefined) {
    feed?.subscribe(() => this.forgetAll());
  }

  get(tokenHash: string, maxAgeMs: number): SessionRow | undefined {
    const hit = this.#rows.get(tokenHash);
    if (hit === undefined) return undefined;
    const now = performance.now();
    if (now - (this.feed ? this.feed.seenThrough() : hit.readAt) < maxAgeMs) return hit.row;
    if (!this.feed) this.#rows.delete(tokenHash);
    return undefined;
  }

  /** Keeps a row read at `readAt` when no forget happened since the read began (`epoch`). */
  keep(tokenHash: string, row: SessionRow, epoch: number, readAt: number): void {
    if (epoch !== this.#epoch) return;
    if (this.#rows.size >= SESSION_CACHE_ENTRIES && !this.#rows.has(tokenHash)) {
      this.#rows.delete(this.#rows.keys().next().value!);
    }
    this.#rows.set(tokenHash, { row, readAt });
  }

  drop(tokenHash: string): void {
    this.#rows.delete(tokenHash);
  }

  forgetAll(): void {
    this.#epoch++;
    this.#rows.clear();
  }
}

export type { SignedInAccount } from './users.js';

/**
 * The account row each request's session check read, kept for that request only (keyed by its
 * context, so it goes with the request): one per service, made by the composition root and handed
 * to the authenticator that fills it and to the routes that read it (`/me`).
 */
export class SignedInAccounts {
  readonly #byRequest = new WeakMap<Context, SignedInAccount>();

  /** The account row the session check of this request read, if it ran: a handler's read of it is free. */
  of(c: Context): SignedInAccount | undefined {
    return this.#byRequest.get(c);
  }

  keep(c: Context, account: SignedInAccount): void {
    this.#byRequest.set(c, account);
  }
}

/**
 * The session check of the app and admin tiers. Every refusal that could tell an attacker which
 * part was wrong (unknown, expired, revoked, other host, disabled, deleted, idle) is the same 401.
 */
export function createSessionAuthenticator(changes?: ChangeFeed, signedIn?: SignedInAccounts): SessionAuthenticator {
  // One per replica (assembleDeps builds one authenticator per service, with its database's feed).
  const cache = new SessionCache(changes);
  const keyChecks: KeyChecks = new WeakMap();
  // The session query, prepared once for the database it runs on.
  let prepared: { db: Database; query: SessionQuery } | undefined;
  return {
    forgetCached: () => cache.forgetAll(),
    async authenticate(c: Context, requirement: TierRequirement): Promise<SessionContext> {
      const ctx = c as Context<AppEnv>;
      const { deps } = ctx.var;
      // A request with a bearer is judged by its key alone: its cookie, if any, is not read.
      const key = presentedKey(c);
      if (key !== undefined) return authenticateKey(c, requirement, key, keyChecks, (account) => signedIn?.keep(c, account));
      const token = sessionToken(c);
      if (!token) throw unauthorized();
      const tokenHash = sha256Hex(token);
      const { db } = deps.database;
      const now = deps.clock.now();
      const maxAgeMs = deps.config.sessionCacheMs;
      let row = maxAgeMs > 0 ? cache.get(tokenHash, maxAgeMs) : undefined;
      // A minute since its last_seen_at: read it again, the idle check and the write need the
      // database's row (another replica may have written it since).
      if (row !== undefined && now.getTime() - row.lastSeenAt.getTime() >= LAST_SEEN_WRITE_MS) row = undefined;
      if (row === undefined) {
        if (prepared?.db !== db) prepared = { db, query: sessionQueryOf(db) };
        const { query } = prepared;
        const epoch = cache.epoch;
        const readAt = performance.now();
        [row] = await query.execute({ tokenHash });
        if (row !== undefined && maxAgeMs > 0) cache.keep(tokenHash, row, epoch, readAt);
      }
      const host = requestHost(c);
      if (
        !row ||
        row.revokedAt !== null ||
        row.expiresAt.getTime() <= now.getTime() ||
        row.host !== host ||
        row.disabled ||
        row.deletedAt !== null ||
        isIdleStaffSession(row.role, row.lastSeenAt, now)
      ) {
        cache.drop(tokenHash);
        // A dead cookie is dropped so that the browser stops presenting it.
        clearSessionCookie(c);
        throw unauthorized();
      }
      const onConsole = isConsoleHost(deps.config, host);
      if (!isStaffRole(row.role) && onConsole) {
        throw new DomainError('forbidden', 'Player sessions are not served on the operator console.');
      }
      if (requirement.tier === 'admin' && (!onConsole || !isStaffRole(row.role))) {
        throw new DomainError('forbidden', 'This operation needs a staff session on the operator console.');
      }
      refuseUnfinishedSetup(row, requirement.setupAllowed);
      // The row just read tells whether a minute has passed: only then is the write worth a round
      // trip (touchSession re-checks in SQL, so concurrent requests still write once).
      if (now.getTime() - row.lastSeenAt.getTime() >= LAST_SEEN_WRITE_MS) {
        const slid = await touchSession(deps.database.db, tokenHash, now);
        cache.drop(tokenHash); // its last_seen_at and expiry moved: the next request reads them
        if (slid) setSessionCookie(c, token, SESSION_TTL_MS);
      }
      signedIn?.keep(c, signedInAccountOf(row));
      return { userId: row.userId, role: row.role, tokenHash, inSetup: row.inSetup, mustChangePassword: row.mustChangePassword };
    },
  };
}
