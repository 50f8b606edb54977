import { and, desc, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { passkeyCredentials } from '../../db/schema/passkeys.js';
import { isUuid } from '../../lib/uuid.js';
import type { PasskeyDirectory } from '../accounts/index.js';

export type CredentialRow = typeof passkeyCredentials.$inferSelect;
export type NewCredential = typeof passkeyCredentials.$inferInsert;


/** A user's passkeys, newest first. */
export function listCredentials(db: Queryable, userId: string): Promise<CredentialRow[]> {
  return db
    .select()
    .from(passkeyCredentials)
    .where(eq(passkeyCredentials.userId, userId))
    .orderBy(desc(passkeyCredentials.createdAt), desc(passkeyCredentials.id));
}

export async function userHasPasskey(db: Queryable, userId: string): Promise<boolean> {
  const [row] = await db.select({ id: passkeyCredentials.id }).from(passkeyCredentials).where(eq(passkeyCredentials.userId, userId)).limit(1);
  return row !== undefined;
}

/** The credential an assertion names, or undefined. */
export async function findCredential(db: Queryable, credentialId: string): Promise<CredentialRow | undefined> {
  const [row] = await db.select().from(passkeyCredentials).where(eq(passkeyCredentials.credentialId, credentialId)).limit(1);
  return row;
}

/** Stores a verified credential; undefined when its credential id is bound already (to anyone). */
export async function insertCredential(db: Queryable, values: NewCredential): Promise<CredentialRow | undefined> {
  const [row] = await db.insert(passkeyCredentials).values(values).onConflictDoNothing({ target: passkeyCredentials.credentialId }).returning();
  return row;
}

/** Unbinds one of the user's own credentials; false when the id names none of theirs. */
export async function deleteOwnCredential(db: Queryable, userId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const rows = await db
    .delete(passkeyCredentials)
    .where(and(eq(passkeyCredentials.id, id), eq(passkeyCredentials.userId, userId)))
    .returning({ id: passkeyCredentials.id });
  return rows.length > 0;
}

/** Unbinds every passkey of an account (the staff remediation); how many there were. */
export async function deleteAllCredentials(db: Queryable, userId: string): Promise<number> {
  const rows = await db.delete(passkeyCredentials).where(eq(passkeyCredentials.userId, userId)).returning({ id: passkeyCredentials.id });
  return rows.length;
}

/**
 * Records a verified assertion: the counter moves only forward, in one conditional statement, so
 * two assertions verified against the same stored value cannot both pass (the second is a replay
 * or a clone). Authenticators that keep no counter report 0 every time, which stays allowed.
 */
export async function advanceCounter(db: Queryable, id: string, newCounter: number, now: Date): Promise<boolean> {
  const c = passkeyCredentials;
  const rows = await db
    .update(c)
    .set({ counter: newCounter, lastUsedAt: now })
    .where(and(eq(c.id, id), sql`(${c.counter} < ${newCounter} or (${c.counter} = 0 and ${newCounter} = 0))`))
    .returning({ id: c.id });
  return rows.length > 0;
}

/** The API view (PasskeyCredential): never the public key. */
export function toCredentialView(row: CredentialRow) {
  return {
    id: row.id,
    name: row.name,
    created_at: row.createdAt.toISOString(),
    ...(row.aaguid !== null ? { aaguid: row.aaguid } : {}),
    ...(row.lastUsedAt !== null ? { last_used_at: row.lastUsedAt.toISOString() } : {}),
  };
}

/** What the accounts feature reads of passkeys (setup status, staff removing a user's passkeys). */
export const passkeyDirectory: PasskeyDirectory = {
  async count(db, userId) {
    const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(passkeyCredentials).where(eq(passkeyCredentials.userId, userId));
    return row?.n ?? 0;
  },
  async removeAll(db, userId) {
    const removed = await db.delete(passkeyCredentials).where(eq(passkeyCredentials.userId, userId)).returning({ id: passkeyCredentials.id });
    return removed.length;
  },
  hasAny(userId) {
    return sql<boolean>`exists (select 1 from ${passkeyCredentials} where ${passkeyCredentials.userId} = ${userId})`;
  },
};
