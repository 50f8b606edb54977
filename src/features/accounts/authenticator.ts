import { eq, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import type { Database } from '../../db/client.js';
import { sessions, users } from '../../db/schema/accounts.js';
import type { AppEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import type { SessionAuthenticator, SessionContext, TierRequirement } from '../../http/session.js';
import { sha256Hex } from '../../lib/secrets.js';
import { isConsoleHost, requestHost } from './hosts.js';
import { isStaffRole } from './roles.js';
import { clearSessionCookie, sessionToken, setSessionCookie } from './session-cookie.js';
import { LAST_SEEN_WRITE_MS, SESSION_TTL_MS, STAFF_IDLE_MS, touchSession } from './session-service.js';

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
      userId: users.id,
      role: users.role,
      disabled: users.disabled,
      deletedAt: users.deletedAt,
      inSetup: users.inSetup,
      username: users.username,
      email: users.email,
      emailVerified: users.emailVerified,
      mustChangePassword: users.mustChangePassword,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.tokenHash, sql.placeholder('tokenHash')))
    .limit(1)
    .prepare('felis_session_by_token');
}
type SessionQuery = ReturnType<typeof sessionQueryOf>;
const sessionQueries = new WeakMap<Database, SessionQuery>();

/** The signed-in account as the session check read it (for the request it checked). */
export interface SignedInAccount {
  id: string;
  username: string;
  email: string | null;
  emailVerified: boolean;
  role: string;
  mustChangePassword: boolean;
  inSetup: boolean;
}
const accounts = new WeakMap<Context, SignedInAccount>();

/** The account row the session check of this request read, if it ran: a handler's read of it is free. */
export function signedInAccount(c: Context): SignedInAccount | undefined {
  return accounts.get(c);
}

/**
 * The session check of the app and admin tiers. Every refusal that could tell an attacker which
 * part was wrong (unknown, expired, revoked, other host, disabled, deleted, idle) is the same 401.
 */
export function createSessionAuthenticator(): SessionAuthenticator {
  return {
    async authenticate(c: Context, requirement: TierRequirement): Promise<SessionContext> {
      const ctx = c as Context<AppEnv>;
      const { deps } = ctx.var;
      const token = sessionToken(c);
      if (!token) throw unauthorized();
      const tokenHash = sha256Hex(token);
      const { db } = deps.database;
      let query = sessionQueries.get(db);
      if (query === undefined) sessionQueries.set(db, (query = sessionQueryOf(db)));
      const [row] = await query.execute({ tokenHash });
      const now = deps.clock.now();
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
      if (row.inSetup && !requirement.setupAllowed) {
        throw new DomainError('setup_required', 'Finish first-run setup: add a passkey or verify an e-mail address.');
      }
      // The row just read tells whether a minute has passed: only then is the write worth a round
      // trip (touchSession re-checks in SQL, so concurrent requests still write once).
      if (now.getTime() - row.lastSeenAt.getTime() >= LAST_SEEN_WRITE_MS) {
        const slid = await touchSession(deps.database.db, tokenHash, now);
        if (slid) setSessionCookie(c, token, SESSION_TTL_MS);
      }
      accounts.set(c, {
        id: row.userId,
        username: row.username,
        email: row.email,
        emailVerified: row.emailVerified,
        role: row.role,
        mustChangePassword: row.mustChangePassword,
        inSetup: row.inSetup,
      });
      return { userId: row.userId, role: row.role, tokenHash, inSetup: row.inSetup, mustChangePassword: row.mustChangePassword };
    },
  };
}
