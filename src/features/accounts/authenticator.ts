import { eq, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import type { ChangeFeed } from '../../db/change-feed.js';
import type { Database } from '../../db/client.js';
import { sessions, users } from '../../db/schema/accounts.js';
import { refuseUnfinishedSetup, SIGNED_IN_USER_COLUMNS, signedInAccountOf, type SignedInAccount } from './sessions/index.js';
import type { AppEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import type { SessionAuthenticator, SessionContext, TierRequirement } from '../../http/session.js';
import { sha256Hex } from '../../lib/secrets.js';
import { isConsoleHost, requestHost } from './sessions/index.js';
import { isStaffRole } from './roles.js';
import { ApiKeyCheck, presentedKey } from './keys/index.js';
import { CheckedRows } from './keys/index.js';
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

export type { SignedInAccount } from './sessions/index.js';

/**
 * The account row each request's session check read, kept for that request only (keyed by its
 * context, so it goes with the request): one per service, made by `createAccountsParts` and handed
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
  // One per replica (createAccountsParts makes one authenticator per service, with its database's feed).
  const cache = new CheckedRows<SessionRow>(changes);
  const keys = new ApiKeyCheck(changes);
  // The session query, prepared once for the database it runs on.
  let prepared: { db: Database; query: SessionQuery } | undefined;
  return {
    forgetCached: () => {
      cache.forgetAll();
      keys.forgetAll();
    },
    close: () => {
      cache.close();
      keys.close();
    },
    // Synchronous when the cache answers (a promise only where a query or a write must wait): a
    // signed-in read then goes through the front door without a promise of its own.
    authenticate(c: Context, requirement: TierRequirement): SessionContext | Promise<SessionContext> {
      // c.get, not c.var: Hono builds a fresh object of every variable on each read of c.var.
      const deps = (c as Context<AppEnv>).get('deps');
      // A request with a bearer is judged by its key alone: its cookie, if any, is not read.
      const key = presentedKey(c);
      if (key !== undefined) return keys.authenticate(c, requirement, key, (account) => signedIn?.keep(c, account));
      const token = sessionToken(c);
      if (!token) throw unauthorized();
      const tokenHash = sha256Hex(token);
      const { db } = deps.database;
      const now = deps.clock.now();
      const row = cache.read(
        tokenHash,
        deps.config.sessionCacheMs,
        () => {
          if (prepared?.db !== db) prepared = { db, query: sessionQueryOf(db) };
          return prepared.query.execute({ tokenHash }).then(([read]) => read);
        },
        // A minute since its last_seen_at: read it again, the idle check and the write need the
        // database's row (another replica may have written it since).
        (cached) => now.getTime() - cached.lastSeenAt.getTime() < LAST_SEEN_WRITE_MS,
      );
      return row instanceof Promise ? row.then((read) => judge(c, requirement, read, token, tokenHash, now)) : judge(c, requirement, row, token, tokenHash, now);
    },
  };

  /** The checks of a session's row against the request, whether it was read now or cached. */
  function judge(c: Context, requirement: TierRequirement, row: SessionRow | undefined, token: string, tokenHash: string, now: Date): SessionContext | Promise<SessionContext> {
    const deps = (c as Context<AppEnv>).get('deps');
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
    signedIn?.keep(c, signedInAccountOf(row));
    const session: SessionContext = { userId: row.userId, role: row.role, tokenHash, inSetup: row.inSetup, mustChangePassword: row.mustChangePassword };
    // The row just read tells whether a minute has passed: only then is the write worth a round
    // trip (touchSession re-checks in SQL, so concurrent requests still write once).
    if (now.getTime() - row.lastSeenAt.getTime() < LAST_SEEN_WRITE_MS) return session;
    return touchSession(deps.database.db, tokenHash, now).then((slid) => {
      cache.drop(tokenHash); // its last_seen_at and expiry moved: the next request reads them
      if (slid) setSessionCookie(c, token, SESSION_TTL_MS);
      return session;
    });
  }
}
