import { and, eq, inArray, isNull, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { linkedAccounts, userQuotas, users, type UserRole } from '../../db/schema/accounts.js';
import { readQuotaDefaults } from '../runtime-settings/index.js';

/**
 * The accounts feature's exported lookups for other features (servers, linking, …). They never
 * return deleted accounts.
 */

export interface DirectoryUser {
  id: string;
  role: UserRole;
  disabled: boolean;
  email: string | null;
  username: string;
}

/** The live (not deleted) account linked to an in-game UUID, if any. */
export async function findUserByMcUuid(db: Queryable, mcUuid: string): Promise<DirectoryUser | undefined> {
  const [row] = await db
    .select({ id: users.id, role: users.role, disabled: users.disabled, email: users.email, username: users.username })
    .from(linkedAccounts)
    .innerJoin(users, eq(users.id, linkedAccounts.userId))
    .where(and(eq(linkedAccounts.mcUuid, mcUuid.toLowerCase()), isNull(users.deletedAt)))
    .limit(1);
  return row;
}

export interface Quota {
  user_id: string;
  max_servers: number | null;
  max_cpu_milli: number | null;
  max_memory_mb: number | null;
  max_storage_gb: number | null;
}

/**
 * A user's quota: the limits staff set (null: unlimited), or, for an account staff never gave one,
 * the platform's defaults (`default_max_servers`, …; runtime-settings), so a new account is bounded.
 */
export async function getQuota(db: Queryable, userId: string): Promise<Quota> {
  const [row] = await db.select().from(userQuotas).where(eq(userQuotas.userId, userId)).limit(1);
  if (!row) return { user_id: userId, ...(await readQuotaDefaults(db)) };
  return {
    user_id: userId,
    max_servers: row.maxServers,
    max_cpu_milli: row.maxCpuMilli,
    max_memory_mb: row.maxMemoryMb,
    max_storage_gb: row.maxStorageGb,
  };
}

/** How to show each user to others: the e-mail address, else the username. Unknown ids are absent. */
export async function displayIdentities(db: Queryable, userIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(userIds)];
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const rows = await db
    .select({ id: users.id, email: users.email, username: users.username })
    .from(users)
    .where(inArray(users.id, ids));
  for (const row of rows) out.set(row.id, row.email ?? row.username);
  return out;
}

/** The live account a person names by username or e-mail address (without case), if any. */
export async function findLiveUserByName(db: Queryable, nameOrEmail: string): Promise<DirectoryUser | undefined> {
  const key = nameOrEmail.trim().toLowerCase();
  const [row] = await db
    .select({ id: users.id, role: users.role, disabled: users.disabled, email: users.email, username: users.username })
    .from(users)
    .where(and(isNull(users.deletedAt), key.includes('@') ? sql`lower(${users.email}) = ${key}` : sql`lower(${users.username}) = ${key}`))
    .limit(1);
  return row;
}

/** Usernames and e-mail addresses of these accounts (deleted ones too: a list names who was added). */
export async function identitiesOf(db: Queryable, userIds: string[]): Promise<Map<string, { username: string; email: string | null }>> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: users.id, email: users.email, username: users.username }).from(users).where(inArray(users.id, ids));
  return new Map(rows.map((r) => [r.id, { username: r.username, email: r.email }]));
}

/*
 * Pieces of other features' statements: where a feature's one statement needs an account's fact
 * beside its own rows, it asks for it here rather than joining the accounts tables itself, and the
 * statement stays one. Each takes the asking statement's column that holds the user id.
 */

/** An audit actor's username: the actor is a user id as text, or a name (`system`, `proxy`, …) that is no account (null). */
export function usernameOfActor(actor: AnyColumn): SQL<string | null> {
  // The actor is compared as the uuid it spells (an index lookup per row) only when it spells one
  // the way Postgres writes it, which is exactly when `users.id::text = actor` could hold.
  return sql<string | null>`(select ${users.username} from ${users} where ${users.id} = case when ${actor} ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then ${actor}::uuid end)`;
}

/** The username of the account whose id the column holds (a column that references an account: never null). */
export function usernameOf(userId: AnyColumn): SQL<string> {
  return sql<string>`(select ${users.username} from ${users} where ${users.id} = ${userId})`;
}

/** The role of the account whose id the column holds (a column that references an account: never null). */
export function roleOf(userId: AnyColumn): SQL<UserRole> {
  return sql<UserRole>`(select ${users.role} from ${users} where ${users.id} = ${userId})`;
}

/** Whether the in-game UUID the column holds is linked to this account: for a condition of the asking statement. */
export function linkedTo(mcUuid: AnyColumn, userId: string): SQL<boolean> {
  return sql<boolean>`exists (select 1 from ${linkedAccounts} where ${linkedAccounts.mcUuid} = ${mcUuid} and ${linkedAccounts.userId} = ${userId})`;
}
