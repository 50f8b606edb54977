import { and, eq, isNull, sql } from 'drizzle-orm';
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

export async function findUserById(db: Queryable, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row;
}

/** Postgres unique violation (23505), through either driver, with the constraint's name. */
export function uniqueViolation(err: unknown): string | undefined {
  for (let e: unknown = err; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const x = e as { code?: string; constraint?: string; constraint_name?: string };
    if (x.code === '23505') return x.constraint_name ?? x.constraint ?? '';
  }
  return undefined;
}
