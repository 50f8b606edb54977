import { and, desc, eq, gt, isNull, lte, or, sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { sessions, type SignInMethod } from '../../../db/schema/accounts.js';
import type { Deps } from '../../../deps.js';
import { randomToken, sha256Hex } from '../../../lib/secrets.js';

export const SESSION_COOKIE = 'svc_session';
/** Sliding lifetime of every session (api-extensions, lifetimes). */
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** A staff session unused this long stops authenticating (contract section 8). */
export const STAFF_IDLE_MS = 30 * 60 * 1000;
/** `last_seen_at` is written at most this often. */
export const LAST_SEEN_WRITE_MS = 60 * 1000;
export const USER_AGENT_MAX_BYTES = 256;

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
export function cutUtf8(value: string, max: number): string {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length <= max) return value;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

export interface MintSessionInput {
  userId: string;
  host: string;
  method: SignInMethod;
  userAgent?: string;
  clientIp?: string;
  /** SHA-256 of the device cookie given with this session (password sign-ins). */
  deviceHash?: string;
}

export interface MintedSession {
  token: string;
  tokenHash: string;
  expiresAt: Date;
}

/** Stores a new session (only the token's sha-256) and returns the opaque token for the cookie. */
export async function mintSession(deps: Pick<Deps, 'clock' | 'random'>, db: Queryable, input: MintSessionInput): Promise<MintedSession> {
  const token = randomToken(deps.random, 32);
  const tokenHash = sha256Hex(token);
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await db.insert(sessions).values({
    tokenHash,
    userId: input.userId,
    host: input.host,
    method: input.method,
    createdAt: now,
    expiresAt,
    lastSeenAt: now,
    userAgent: cutUtf8(input.userAgent ?? '', USER_AGENT_MAX_BYTES),
    clientIp: input.clientIp ?? '',
    deviceHash: input.deviceHash ?? null,
  });
  return { token, tokenHash, expiresAt };
}

/** Revokes one session if it is still live; true when it was. */
export async function revokeSession(db: Queryable, tokenHash: string, now: Date, userId?: string): Promise<boolean> {
  const rows = await db
    .update(sessions)
    .set({ revokedAt: now })
    .where(
      and(
        eq(sessions.tokenHash, tokenHash),
        isNull(sessions.revokedAt),
        userId === undefined ? undefined : eq(sessions.userId, userId),
      ),
    )
    .returning({ tokenHash: sessions.tokenHash });
  return rows.length > 0;
}

/** Revokes every live session of a user, except `keep` when given; returns how many. */
export async function revokeUserSessions(db: Queryable, userId: string, now: Date, keep?: string): Promise<number> {
  const rows = await db
    .update(sessions)
    .set({ revokedAt: now })
    .where(
      and(
        eq(sessions.userId, userId),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
        keep === undefined ? undefined : sql`${sessions.tokenHash} <> ${keep}`,
      ),
    )
    .returning({ tokenHash: sessions.tokenHash });
  return rows.length;
}

/**
 * Records use of a session: slides its expiry and `last_seen_at`, at most once a minute. The
 * condition in the statement keeps concurrent requests from writing more than once.
 */
export async function touchSession(db: Queryable, tokenHash: string, now: Date): Promise<Date | undefined> {
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  const rows = await db
    .update(sessions)
    .set({ lastSeenAt: now, expiresAt })
    .where(
      and(
        eq(sessions.tokenHash, tokenHash),
        lte(sessions.lastSeenAt, new Date(now.getTime() - LAST_SEEN_WRITE_MS)),
      ),
    )
    .returning({ expiresAt: sessions.expiresAt });
  return rows[0]?.expiresAt;
}

/**
 * A user's live sessions, newest first: not revoked, not expired, and for staff not idle past
 * the limit (such a session no longer authenticates, so it leaves the list).
 */
export async function listLiveSessions(db: Queryable, userId: string, staff: boolean, now: Date) {
  return db
    .select()
    .from(sessions)
    .where(
      and(
        eq(sessions.userId, userId),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
        staff ? gt(sessions.lastSeenAt, new Date(now.getTime() - STAFF_IDLE_MS)) : undefined,
      ),
    )
    .orderBy(desc(sessions.createdAt), desc(sessions.tokenHash));
}

/**
 * Whether the account signed in before from this client: from this address (its sessions keep the
 * address), with this device token (given at one of its sign-ins), or the request carries a live
 * session of it. One statement; asked for an unknown account too (of nobody), so that the answer
 * takes the same time.
 */
export async function knownClient(
  db: Queryable,
  userId: string,
  client: { clientIp: string; deviceHash?: string; sessionHash?: string },
  now: Date,
): Promise<boolean> {
  const liveCookie = client.sessionHash ? and(eq(sessions.tokenHash, client.sessionHash), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)) : undefined;
  const rows = await db
    .select({ one: sql`1` })
    .from(sessions)
    .where(
      and(
        eq(sessions.userId, userId),
        or(
          client.clientIp === '' ? sql`false` : eq(sessions.clientIp, client.clientIp),
          client.deviceHash ? eq(sessions.deviceHash, client.deviceHash) : sql`false`,
          liveCookie ?? sql`false`,
        ),
      ),
    )
    .limit(1);
  return rows.length > 0;
}
