import { lockForTransaction } from '../../coordination/index.js';
import { and, count, desc, eq, gt, lte, notInArray, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { passkeyCeremonies, type PasskeyPurpose } from '../../db/schema/passkeys.js';

/** WebAuthn ceremony state lives this long (api-extensions, lifetimes). */
export const CEREMONY_TTL_MS = 5 * 60 * 1000;
/** Email-first sign-ins of one account in flight at once; an older one gives way to a new one. */
export const LOGIN_CEREMONIES_PER_USER = 8;
// Discoverable begins count and insert under one lock, so racing begins cannot all pass one count.

export interface Ceremony {
  challenge: string;
  userId: string | null;
}

interface NewCeremony {
  purpose: PasskeyPurpose;
  subject: string;
  challenge: string;
  userId?: string;
  now: Date;
}

const valuesOf = (c: NewCeremony, network?: string) => ({
  purpose: c.purpose,
  subject: c.subject,
  challenge: c.challenge,
  userId: c.userId ?? null,
  network: network ?? null,
  createdAt: c.now,
  expiresAt: new Date(c.now.getTime() + CEREMONY_TTL_MS),
});

/** Starts a ceremony that supersedes any earlier one of the same purpose and subject. */
export async function replaceCeremony(db: Queryable, ceremony: NewCeremony): Promise<void> {
  await db.transaction(async (tx) => {
    const t = passkeyCeremonies;
    await tx.delete(t).where(and(eq(t.purpose, ceremony.purpose), eq(t.subject, ceremony.subject)));
    await tx.insert(t).values(valuesOf(ceremony));
  });
}

/**
 * Adds an email-first sign-in beside the account's others: anyone who knows the address can begin
 * one, so a begin must never cancel the owner's. The account keeps its newest few; finish finds
 * a ceremony by the challenge the authenticator signed.
 */
export async function addLoginCeremony(db: Queryable, ceremony: Omit<NewCeremony, 'purpose'> & { userId: string }): Promise<void> {
  await db.transaction(async (tx) => {
    const t = passkeyCeremonies;
    await tx.insert(t).values(valuesOf({ ...ceremony, purpose: 'login' }));
    const mine = and(eq(t.purpose, 'login'), eq(t.subject, ceremony.subject));
    const newest = tx.select({ id: t.id }).from(t).where(mine).orderBy(desc(t.createdAt), desc(t.id)).limit(LOGIN_CEREMONIES_PER_USER);
    await tx.delete(t).where(and(mine, sql`(${t.expiresAt} <= ${ceremony.now.toISOString()}::timestamptz or ${notInArray(t.id, newest)})`));
  });
}

export interface Caps {
  /** Live discoverable ceremonies over every network. */
  global: number;
  /** Live discoverable ceremonies begun from one network. */
  perNetwork: number;
}

/**
 * Adds a discoverable sign-in unless a cap is reached (false then). Expired ceremonies of every
 * kind are reaped first, under the lock, so the counts are exactly the live ones.
 */
export async function addDiscoverableCeremony(
  db: Queryable,
  ceremony: Omit<NewCeremony, 'purpose' | 'userId'> & { network: string },
  caps: Caps,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const t = passkeyCeremonies;
    await lockForTransaction(tx, 'discoverablePasskeys');
    await reapExpiredCeremonies(tx, ceremony.now);
    const live = and(eq(t.purpose, 'discoverable'), gt(t.expiresAt, ceremony.now));
    const [counts] = await tx
      .select({ all: count(), fromNetwork: sql<number>`count(*) filter (where ${t.network} = ${ceremony.network})`.mapWith(Number) })
      .from(t)
      .where(live);
    if ((counts?.all ?? 0) >= caps.global || (counts?.fromNetwork ?? 0) >= caps.perNetwork) return false;
    await tx.insert(t).values(valuesOf({ ...ceremony, purpose: 'discoverable' }, ceremony.network));
    return true;
  });
}

/** Deletes every expired ceremony; how many there were. */
export async function reapExpiredCeremonies(db: Queryable, now: Date): Promise<number> {
  const rows = await db.delete(passkeyCeremonies).where(lte(passkeyCeremonies.expiresAt, now)).returning({ id: passkeyCeremonies.id });
  return rows.length;
}

/**
 * Takes a ceremony out of the table before anything is verified, so it is spent even when the
 * verification then fails, and of concurrent finishes only one gets it. With `challenge`, only
 * the ceremony of that challenge is taken (the email-first sign-in). Expired: undefined.
 */
export async function takeCeremony(
  db: Queryable,
  key: { purpose: PasskeyPurpose; subject: string; challenge?: string; now: Date },
): Promise<Ceremony | undefined> {
  const t = passkeyCeremonies;
  const rows = await db
    .delete(t)
    .where(and(eq(t.purpose, key.purpose), eq(t.subject, key.subject), key.challenge === undefined ? undefined : eq(t.challenge, key.challenge)))
    .returning({ challenge: t.challenge, userId: t.userId, expiresAt: t.expiresAt });
  const live = rows.find((r) => r.expiresAt.getTime() > key.now.getTime());
  return live && { challenge: live.challenge, userId: live.userId };
}
