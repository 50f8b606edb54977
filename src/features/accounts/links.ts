import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { linkedAccounts, users } from '../../db/schema/accounts.js';

/** Which identity source vouched for a linked UUID. */
type AuthSource = (typeof linkedAccounts.$inferInsert)['authSource'];

/**
 * The durable links between accounts and in-game identities (`linked_accounts`): the linking,
 * migration and reclaim features make and read them through here.
 */

/** The account a UUID is linked to (deleted ones too: the caller judges), with its standing. */
export async function linkOf(tx: Queryable, mcUuid: string) {
  const [row] = await tx
    .select({ userId: linkedAccounts.userId, authSource: linkedAccounts.authSource, role: users.role, disabled: users.disabled, deletedAt: users.deletedAt })
    .from(linkedAccounts)
    .innerJoin(users, eq(users.id, linkedAccounts.userId))
    .where(eq(linkedAccounts.mcUuid, mcUuid))
    .limit(1);
  return row;
}

/** Writes the durable link; the code's auth source is copied onto it. */
export async function insertLink(tx: Queryable, userId: string, mcUuid: string, authSource: AuthSource, now: Date): Promise<void> {
  await tx.insert(linkedAccounts).values({ mcUuid, userId, authSource, verifiedAt: now });
}

/** Whether an account has a game identity linked. */
export async function hasLink(db: Queryable, userId: string): Promise<boolean> {
  const [row] = await db.select({ mcUuid: linkedAccounts.mcUuid }).from(linkedAccounts).where(eq(linkedAccounts.userId, userId)).limit(1);
  return row !== undefined;
}
