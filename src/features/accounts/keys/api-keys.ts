import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import type { ChangeFeed } from '../../../db/change-feed.js';
import type { Database, Queryable } from '../../../db/client.js';
import { apiKeys, users, type ApiKeyScope } from '../../../db/schema/accounts.js';
import { refuseUnfinishedSetup, SIGNED_IN_USER_COLUMNS, signedInAccountOf, type SignedInAccount } from '../sessions/index.js';
import type { Deps } from '../../../deps.js';
import type { AppEnv } from '../../../http/env.js';
import { requestHeader } from '../../../http/request-header.js';
import type { SessionContext, TierRequirement } from '../../../http/session.js';
import { DomainError } from '../../../lib/errors.js';
import { randomToken, sha256Hex } from '../../../lib/secrets.js';
import { writeAudit } from '../../audit/index.js';
import { KeyBudgets } from './api-key-budget.js';
import { CheckedRows } from './checked-rows.js';
import { isConsoleHost, requestHost } from '../sessions/index.js';
import { requireReauth } from '../sessions/index.js';


/**
 * API keys (issue 42): a script's, a bot's or CI's way in as its user, without a browser session.
 * `Authorization: Bearer felis_…` on the panel host, app tier only; never the admin tier, never key
 * management; a `read` key reads only. Only the secret's sha-256 is kept, and the secret is shown
 * once. A key dies with its user's disabling and deletion and with "sign out everywhere".
 */

export const API_KEY_PREFIX = 'felis_';
/** What a key looks like: the prefix and 43 base64url characters (32 random bytes); anything else is no key of ours. */
const KEY_SHAPE = /^felis_[A-Za-z0-9_-]{40,128}$/;
/** Keys one account may hold at once (revoked and expired ones do not count). */
export const API_KEYS_PER_USER = 25;
const MINUTE_MS = 60_000;

const unauthorized = () => new DomainError('unauthorized', 'A signed-in session or a valid API key is required.');

/** The key a request presents, when it sends `Authorization: Bearer …` (then the cookie is not read). */
export function presentedKey(c: Context): string | undefined {
  const header = requestHeader(c, 'authorization');
  if (header === undefined || !/^bearer /i.test(header)) return undefined;
  return header.slice(7).trim();
}

/** The key check's statements, prepared once per database (like the session query). */
function keyStatementsOf(db: Database) {
  const now = sql.placeholder('now');
  const window = sql.placeholder('window');
  return {
    db,
    /** The live (not revoked) key by its secret's hash, with its user's columns. */
    byHash: db
      .select({ id: apiKeys.id, scopes: apiKeys.scopes, expiresAt: apiKeys.expiresAt, lastUsedAt: apiKeys.lastUsedAt, ...SIGNED_IN_USER_COLUMNS })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .where(and(eq(apiKeys.secretHash, sql.placeholder('hash')), isNull(apiKeys.revokedAt)))
      .limit(1)
      .prepare('felis_api_key_by_hash'),
    /**
     * A slice of the key's minute (api-key-budget.ts): adds what is asked to the minute's claimed
     * count, unless the minute's budget is already claimed. What was given follows from the new
     * count: the count before it was `count - want`.
     */
    claim: db
      .update(apiKeys)
      .set({
        windowCount: sql`case when ${apiKeys.windowStart} = ${window}::timestamptz then ${apiKeys.windowCount} + ${sql.placeholder('want')}::int else ${sql.placeholder('want')}::int end`,
        windowStart: sql`${window}::timestamptz`,
      })
      .where(
        and(
          eq(apiKeys.id, sql.placeholder('id')),
          sql`(${apiKeys.windowStart} is distinct from ${window}::timestamptz or ${apiKeys.windowCount} < ${sql.placeholder('limit')}::int)`,
        ),
      )
      .returning({ count: apiKeys.windowCount })
      .prepare('felis_api_key_claim'),
    /** `last_used_at`, unless some replica wrote it less than a minute ago. */
    touch: db
      .update(apiKeys)
      .set({ lastUsedAt: sql`${now}::timestamptz` })
      .where(
        and(
          eq(apiKeys.id, sql.placeholder('id')),
          sql`(${apiKeys.lastUsedAt} is null or ${apiKeys.lastUsedAt} <= ${now}::timestamptz - interval '1 minute')`,
        ),
      )
      .prepare('felis_api_key_touch'),
  };
}
type KeyStatements = ReturnType<typeof keyStatementsOf>;
type CheckedKey = NonNullable<Awaited<ReturnType<KeyStatements['byHash']['execute']>>[number]>;

const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * The API key check of one replica (the authenticator makes one): the key's row cached as a
 * session's row is (checked-rows.ts: forgotten on this replica's writes and on the change feed's
 * word, which the `api_keys` trigger feeds on a revocation), `last_used_at` written at most once a
 * minute, and the per-key limit counted in the database a slice at a time (api-key-budget.ts). A
 * request whose key is cached and whose replica holds some of the key's minute costs no statement.
 */
export class ApiKeyCheck {
  readonly #rows: CheckedRows<CheckedKey>;
  readonly #budgets = new KeyBudgets();
  #statements: KeyStatements | undefined;

  constructor(feed: ChangeFeed | undefined) {
    this.#rows = new CheckedRows(feed);
  }

  forgetAll(): void {
    this.#rows.forgetAll();
  }

  close(): void {
    this.#rows.close();
  }

  #statementsFor(db: Database): KeyStatements {
    if (this.#statements?.db !== db) this.#statements = keyStatementsOf(db);
    return this.#statements;
  }

  /**
   * Checks a presented key for a tier; the session context it acts with. Every refusal that could
   * tell which part was wrong (unknown, revoked, expired, disabled or deleted user, the console
   * host) is the same 401.
   */
  async authenticate(c: Context, requirement: TierRequirement, key: string, remember: (account: SignedInAccount) => void): Promise<SessionContext> {
    // c.get, not c.var (which builds an object of every variable on each read), as the session check.
    const deps = (c as Context<AppEnv>).get('deps');
    if (!KEY_SHAPE.test(key) || isConsoleHost(deps.config, requestHost(c))) throw unauthorized();
    const statements = this.#statementsFor(deps.database.db);
    const hash = sha256Hex(key);
    const row = await this.#rows.read(hash, deps.config.sessionCacheMs, async () => (await statements.byHash.execute({ hash }))[0]);
    const now = deps.clock.now();
    if (!row || row.disabled || row.deletedAt !== null || (row.expiresAt !== null && row.expiresAt.getTime() <= now.getTime())) {
      this.#rows.drop(hash);
      throw unauthorized();
    }
    const limit = deps.config.apiKeyRequestsPerMinute;
    const claim = async (window: Date, want: number) => {
      const [claimed] = await statements.claim.execute({ id: row.id, window: window.toISOString(), want, limit });
      // The count before this claim was `count - want`: what was left of the limit, up to `want`.
      return claimed === undefined ? 0 : Math.max(0, Math.min(want, limit - (claimed.count - want)));
    };
    if (!(await this.#budgets.take(row.id, now, limit, claim))) {
      throw new DomainError('rate_limited', `This API key made ${limit} requests this minute; wait a moment.`, { retryAfterSeconds: KeyBudgets.retryAfterSeconds(now) });
    }
    if (requirement.tier === 'admin') throw new DomainError('forbidden', 'An API key never passes the admin tier.');
    if (!row.scopes.includes('write') && !READ_METHODS.has(c.req.method)) throw new DomainError('forbidden', 'This API key may only read.');
    refuseUnfinishedSetup(row, requirement.setupAllowed);
    await this.#touch(statements, row, now);
    remember(signedInAccountOf(row));
    // No session stands behind a key: its "token hash" names the key, so that no session row, no
    // reauth proof and no "current session" ever matches it.
    return {
      userId: row.userId,
      role: row.role,
      tokenHash: `api-key:${row.id}`,
      inSetup: row.inSetup,
      mustChangePassword: row.mustChangePassword,
      apiKey: { id: row.id, scopes: row.scopes },
    };
  }

  /**
   * `last_used_at` once a minute: the row (cached or just read) says whether a minute has passed;
   * it is moved forward before the write so that the requests in flight beside this one do not
   * write too (the statement re-checks in SQL, so replicas still write once a minute between them).
   */
  async #touch(statements: KeyStatements, row: CheckedKey, now: Date): Promise<void> {
    const before = row.lastUsedAt;
    if (before !== null && now.getTime() - before.getTime() < MINUTE_MS) return;
    row.lastUsedAt = now;
    try {
      await statements.touch.execute({ id: row.id, now: now.toISOString() });
    } catch (err) {
      row.lastUsedAt = before;
      throw err;
    }
  }
}

/** Revokes every live key of a user (disabling, deletion, "sign out everywhere"); how many. */
export async function revokeUserApiKeys(db: Queryable, userId: string, now: Date): Promise<number> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length;
}

type KeyDeps = Pick<Deps, 'database' | 'clock' | 'random'>;
type KeyRow = typeof apiKeys.$inferSelect;

/** A key as the list shows it: never the secret nor its hash. */
export function keyView(row: KeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    created_at: row.createdAt.toISOString(),
    ...(row.lastUsedAt ? { last_used_at: row.lastUsedAt.toISOString() } : {}),
    ...(row.expiresAt ? { expires_at: row.expiresAt.toISOString() } : {}),
  };
}

/** Keys are managed by a person in a session, never through a key. */
function refuseThroughKey(session: SessionContext): void {
  if (session.apiKey) throw new DomainError('forbidden', 'API keys are created and revoked in a signed-in session, never with a key.');
}

function liveKeys(db: Queryable, userId: string, now: Date): Promise<KeyRow[]> {
  return db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now))))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
}

/** The account's live keys (not revoked, not expired), oldest first. */
export function listApiKeys(deps: KeyDeps, session: SessionContext): Promise<KeyRow[]> {
  return liveKeys(deps.database.db, session.userId, deps.clock.now());
}

/** Makes a key (a fresh proof first); the secret is in the answer and nowhere else, ever. */
export async function createApiKey(
  deps: KeyDeps,
  session: SessionContext,
  input: { name: string; scopes?: ApiKeyScope[]; expiresAt?: Date },
  requestId: string | undefined,
): Promise<{ row: KeyRow; secret: string }> {
  refuseThroughKey(session);
  const now = deps.clock.now();
  if (input.expiresAt !== undefined && input.expiresAt.getTime() <= now.getTime()) throw new DomainError('bad_request', 'expires_at must be in the future.');
  await requireReauth(deps, session);
  const secret = `${API_KEY_PREFIX}${randomToken(deps.random, 32)}`;
  const scopes: ApiKeyScope[] = input.scopes?.includes('write') || input.scopes === undefined ? ['read', 'write'] : ['read'];
  return deps.database.db.transaction(async (tx) => {
    // Counted under the account's row lock, so that two creations at once cannot pass the limit.
    await tx.select({ id: users.id }).from(users).where(eq(users.id, session.userId)).for('update');
    const live = await liveKeys(tx, session.userId, now);
    if (live.length >= API_KEYS_PER_USER) throw new DomainError('conflict', `An account holds at most ${API_KEYS_PER_USER} API keys; revoke one first.`);
    const [row] = await tx
      .insert(apiKeys)
      .values({ userId: session.userId, name: input.name, prefix: secret.slice(0, 12), secretHash: sha256Hex(secret), scopes, createdAt: now, expiresAt: input.expiresAt ?? null })
      .returning();
    if (!row) throw new Error('the key row was not written');
    await writeAudit(tx, { at: now, actor: session.userId, action: 'api_key.create', target: session.userId, detail: { api_key_id: row.id, scopes }, requestId: requestId ?? null });
    return { row, secret };
  });
}

/** Revokes one of the account's keys: 404 for anyone else's, or one already gone. */
export async function revokeApiKey(deps: KeyDeps, session: SessionContext, id: string, requestId: string | undefined): Promise<void> {
  refuseThroughKey(session);
  const now = deps.clock.now();
  await deps.database.db.transaction(async (tx) => {
    const rows = await tx
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, session.userId), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    if (rows.length === 0) throw new DomainError('not_found', 'No such API key.');
    await writeAudit(tx, { at: now, actor: session.userId, action: 'api_key.revoke', target: session.userId, detail: { api_key_id: id }, requestId: requestId ?? null });
  });
}
