import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { users } from '../../db/schema/accounts.js';

export type UserRow = typeof users.$inferSelect;

/** The live (not deleted) account holding an address, compared without case. */
export async function findLiveUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(and(sql`lower(${users.email}) = ${email.toLowerCase()}`, isNull(users.deletedAt)))
    .limit(1);
  return row;
}

/** The live (not deleted) account of a username, compared without case (`name` lowercased by the caller). */
export async function findLiveUserByUsername(db: Queryable, name: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(and(sql`lower(${users.username}) = ${name}`, isNull(users.deletedAt)))
    .limit(1);
  return row;
}

/** Sets an account's password hash; the change it forced (`must_change_password`) is done. */
export async function setPasswordHash(db: Queryable, userId: string, passwordHash: string, now: Date): Promise<void> {
  await db.update(users).set({ passwordHash, mustChangePassword: false, updatedAt: now }).where(eq(users.id, userId));
}

export async function findUserById(db: Queryable, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row;
}

/** The live owners (not deleted), oldest first. */
export async function liveOwners(db: Queryable): Promise<UserRow[]> {
  return db
    .select()
    .from(users)
    .where(and(eq(users.role, 'owner'), isNull(users.deletedAt)))
    .orderBy(asc(users.createdAt));
}

/** Creates an account; returns its row. */
export async function insertUser(db: Queryable, values: typeof users.$inferInsert): Promise<UserRow> {
  const [row] = await db.insert(users).values(values).returning();
  return row!;
}

/** Creates an account unless its name (or address) is taken; returns its row, or undefined when taken. */
export async function insertUserUnlessTaken(db: Queryable, values: typeof users.$inferInsert): Promise<UserRow | undefined> {
  const [row] = await db.insert(users).values(values).onConflictDoNothing().returning();
  return row;
}

/** Marks an account's e-mail address verified (a code sent to it came back). */
export async function markEmailVerified(db: Queryable, userId: string, now: Date): Promise<void> {
  await db.update(users).set({ emailVerified: true, updatedAt: now }).where(eq(users.id, userId));
}

/**
 * Puts an account into first-run lockdown (`inSetup`), or takes it out (only if it is in it).
 * Returns the row changed, if any.
 */
export async function setInSetup(db: Queryable, userId: string, inSetup: boolean, now: Date): Promise<UserRow | undefined> {
  const [row] = await db
    .update(users)
    .set({ inSetup, updatedAt: now })
    .where(inSetup ? eq(users.id, userId) : and(eq(users.id, userId), eq(users.inSetup, true)))
    .returning();
  return row;
}

/** Locks an account's row until the transaction ends (its other writes wait); false when there is no such account. */
export async function lockUser(tx: Queryable, userId: string): Promise<boolean> {
  const rows = await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
  return rows.length > 0;
}

/** Postgres unique violation (23505), through either driver, with the constraint's name. */
export function uniqueViolation(err: unknown): string | undefined {
  for (let e: unknown = err; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const x = e as { code?: string; constraint?: string; constraint_name?: string };
    if (x.code === '23505') return x.constraint_name ?? x.constraint ?? '';
  }
  return undefined;
}
