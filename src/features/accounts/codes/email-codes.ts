import { and, desc, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { emailCodeFailures, emailCodes, type EmailCodePurpose } from '../../../db/schema/accounts.js';
import { DomainError } from '../../../lib/errors.js';
import type { RandomSource } from '../../../lib/random.js';
import { secretsEqual, sha256Hex } from '../../../lib/secrets.js';

/** E-mail one-time codes (api-extensions, lifetimes). */
export const CODE_TTL_MS = 10 * 60 * 1000;
/** Tries per code, for every code a person types back (e-mail, migration step-up, operator login). */
export const CODE_MAX_ATTEMPTS = 5;
export const CODE_RESEND_COOLDOWN_MS = 60 * 1000;
export const DOOR_FAILURE_LIMIT = 10;
export const DOOR_FAILURE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Six decimal digits, uniform: 32-bit draws above the last whole multiple of 10^6 are redrawn. */
export function generateCode(random: RandomSource): string {
  const limit = Math.floor(0x1_0000_0000 / 1_000_000) * 1_000_000;
  for (;;) {
    const b = random.bytes(4);
    const n = ((b[0]! << 24) >>> 0) + (b[1]! << 16) + (b[2]! << 8) + b[3]!;
    if (n < limit) return String(n % 1_000_000).padStart(6, '0');
  }
}

const codeHash = (userId: string, purpose: EmailCodePurpose, code: string) => sha256Hex(`${userId}:${purpose}:${code}`);

/**
 * Seconds until another code may follow one sent at `sentAt` (0: now). One code a minute, whatever
 * the code is for and wherever it is stored.
 */
export function resendWait(sentAt: Date | undefined, now: Date): number {
  const ms = sentAt === undefined ? 0 : sentAt.getTime() + CODE_RESEND_COOLDOWN_MS - now.getTime();
  return ms > 0 ? Math.ceil(ms / 1000) : 0;
}

/** Whether a typed code is one of ours (six digits) and the one whose hash is stored, compared in constant time. */
export function codeMatches(typed: string, storedHash: string | null, hashOf: (code: string) => string): boolean {
  return storedHash !== null && /^\d{6}$/.test(typed) && secretsEqual(hashOf(typed), storedHash);
}

/**
 * When a code last went to this account or this address, within the cooldown: a mailbox is not
 * flooded through several accounts.
 */
async function lastCodeSentAt(db: Queryable, userId: string, email: string, now: Date): Promise<Date | undefined> {
  const since = new Date(now.getTime() - CODE_RESEND_COOLDOWN_MS);
  const [row] = await db
    .select({ last: sql<string | null>`max(${emailCodes.createdAt})` })
    .from(emailCodes)
    .where(and(gt(emailCodes.createdAt, since), sql`(${emailCodes.userId} = ${userId} or lower(${emailCodes.email}) = ${email.toLowerCase()})`));
  return row?.last ? new Date(row.last) : undefined;
}

/**
 * Seconds until the account's e-mail door opens again (0 when open): it is locked while the last
 * 24 hours hold DOOR_FAILURE_LIMIT wrong codes, so it opens when the limit-th newest ages out.
 */
export async function emailDoorLockedFor(db: Queryable, userId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({ at: emailCodeFailures.at })
    .from(emailCodeFailures)
    .where(and(eq(emailCodeFailures.userId, userId), gt(emailCodeFailures.at, new Date(now.getTime() - DOOR_FAILURE_WINDOW_MS))))
    .orderBy(desc(emailCodeFailures.at))
    .offset(DOOR_FAILURE_LIMIT - 1)
    .limit(1);
  if (!row) return 0;
  return Math.max(1, Math.ceil((row.at.getTime() + DOOR_FAILURE_WINDOW_MS - now.getTime()) / 1000));
}

/** Why no code may be mailed to an account or an address now: its e-mail door is locked, or one went out a moment ago. */
export type CodeHold = { reason: 'door_locked' | 'cooldown'; retryAfter: number };

export async function codeHold(db: Queryable, userId: string, email: string, now: Date): Promise<CodeHold | undefined> {
  const locked = await emailDoorLockedFor(db, userId, now);
  if (locked > 0) return { reason: 'door_locked', retryAfter: locked };
  const wait = resendWait(await lastCodeSentAt(db, userId, email, now), now);
  return wait > 0 ? { reason: 'cooldown', retryAfter: wait } : undefined;
}

/** The answer of a code that may not go out yet, with the seconds until it may. */
export function codeHeld(hold: CodeHold): DomainError {
  return hold.reason === 'door_locked'
    ? new DomainError('too_many_attempts', 'Too many wrong codes; e-mail codes are locked for a day.', { retryAfterSeconds: hold.retryAfter })
    : new DomainError('otp_resend_cooldown', 'A code was sent less than a minute ago.', { retryAfterSeconds: hold.retryAfter });
}

/** Stores a fresh code (hashed) for the account and purpose, superseding any earlier one. */
export async function issueCode(
  db: Queryable,
  input: { userId: string; purpose: EmailCodePurpose; email: string; now: Date; random: RandomSource },
): Promise<{ code: string; expiresAt: Date }> {
  const code = generateCode(input.random);
  const expiresAt = new Date(input.now.getTime() + CODE_TTL_MS);
  const values = {
    email: input.email,
    codeHash: codeHash(input.userId, input.purpose, code),
    createdAt: input.now,
    expiresAt,
    attempts: 0,
    consumedAt: null,
  };
  await db
    .insert(emailCodes)
    .values({ userId: input.userId, purpose: input.purpose, ...values })
    .onConflictDoUpdate({ target: [emailCodes.userId, emailCodes.purpose], set: values });
  return { code, expiresAt };
}

/** Forgets a code that could not be sent, so that its cooldown does not hold the retry. */
export async function dropCode(db: Queryable, userId: string, purpose: EmailCodePurpose): Promise<void> {
  await db.delete(emailCodes).where(and(eq(emailCodes.userId, userId), eq(emailCodes.purpose, purpose)));
}

/** `retryAfter`: seconds until a locked door opens, or until a new code may replace a locked one. */
export type CodeCheck = { ok: true; email: string } | CodeFailure;
export type CodeFailure = { ok: false; reason: 'invalid' } | { ok: false; reason: 'locked'; retryAfter: number };

/** The answer of every typed code (e-mailed, bind, link, migration) that is not a live one. */
export const invalidCode = () => new DomainError('invalid_code', 'The code is wrong, expired or already used.');

/** The answer of a typed code that was refused. */
export function codeRefused(failure: CodeFailure): DomainError {
  return failure.reason === 'locked'
    ? new DomainError('too_many_attempts', 'Too many wrong codes; this code is locked.', { retryAfterSeconds: failure.retryAfter })
    : invalidCode();
}

/**
 * Checks a typed code. The attempt is counted in the same statement that reads the code, before
 * any comparison, so concurrent guesses can never get more than CODE_MAX_ATTEMPTS past it; a
 * match is spent by a conditional update, so a code signs in once.
 */
export async function checkCode(
  db: Queryable,
  input: { userId: string; purpose: EmailCodePurpose; code: string; now: Date },
): Promise<CodeCheck> {
  const { userId, purpose, now } = input;
  const doorLocked = await emailDoorLockedFor(db, userId, now);
  if (doorLocked > 0) return { ok: false, reason: 'locked', retryAfter: doorLocked };
  const live = and(
    eq(emailCodes.userId, userId),
    eq(emailCodes.purpose, purpose),
    isNull(emailCodes.consumedAt),
    gt(emailCodes.expiresAt, now),
  );
  const [counted] = await db
    .update(emailCodes)
    .set({ attempts: sql`${emailCodes.attempts} + 1` })
    .where(and(live, lt(emailCodes.attempts, CODE_MAX_ATTEMPTS)))
    .returning({ codeHash: emailCodes.codeHash, email: emailCodes.email });
  if (!counted) {
    const [locked] = await db.select({ createdAt: emailCodes.createdAt }).from(emailCodes).where(live);
    if (!locked) return { ok: false, reason: 'invalid' };
    return { ok: false, reason: 'locked', retryAfter: Math.max(1, resendWait(locked.createdAt, now)) };
  }
  if (!codeMatches(input.code, counted.codeHash, (code) => codeHash(userId, purpose, code))) {
    await db.insert(emailCodeFailures).values({ userId, at: now });
    return { ok: false, reason: 'invalid' };
  }
  const [spent] = await db
    .update(emailCodes)
    .set({ consumedAt: now })
    .where(and(live, eq(emailCodes.codeHash, counted.codeHash)))
    .returning({ email: emailCodes.email });
  return spent ? { ok: true, email: spent.email } : { ok: false, reason: 'invalid' };
}
