import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { settings } from '../../db/schema/settings.js';

/**
 * Settings that staff edit on a page (entry policy, wake policy, session sources): one row of the
 * `settings` table each, a JSON value and a revision that every write bumps. The pages read the
 * revision with the value and name it back when they save; a save naming an older revision is
 * refused, so two people editing at once never overwrite each other unseen, on any replica.
 */

export interface StoredSetting {
  value: unknown;
  revision: number;
}

/** The row of `key`, or undefined when nothing was ever saved. */
export async function readStored(db: Queryable, key: string): Promise<StoredSetting | undefined> {
  const [row] = await db.select({ value: settings.value, revision: settings.revision }).from(settings).where(eq(settings.key, key));
  return row;
}

/** The values of `keys` that were ever saved, by key: one query. */
export async function readValues(db: Queryable, keys: readonly string[]): Promise<Record<string, unknown>> {
  const rows = await db
    .select({ key: settings.key, value: settings.value })
    .from(settings)
    .where(inArray(settings.key, [...keys]));
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/** Writes `value` whatever the row holds (bumping its revision): for settings no page edits with a revision. */
export async function writeValue(db: Queryable, key: string, value: unknown, now: Date): Promise<void> {
  const json = sql`${JSON.stringify(value)}::jsonb`;
  await db
    .insert(settings)
    .values({ key, value: json, updatedAt: now })
    .onConflictDoUpdate({ target: settings.key, set: { value: json, updatedAt: now, revision: sql`${settings.revision} + 1` } });
}

/** Writes `value` only when the row has none yet. */
export async function seedValue(db: Queryable, key: string, value: unknown, now: Date): Promise<void> {
  await db
    .insert(settings)
    .values({ key, value: sql`${JSON.stringify(value)}::jsonb`, updatedAt: now })
    .onConflictDoNothing();
}

/** The revision as the API shows it: an opaque string ("0" while nothing was saved). */
export function revisionText(stored: StoredSetting | undefined): string {
  return String(stored?.revision ?? 0);
}

/** A revision a client named back, or undefined when it is not one of ours. */
export function parseRevision(text: string): number | undefined {
  return /^(0|[1-9]\d{0,9})$/.test(text) ? Number(text) : undefined;
}

/**
 * Writes `value` only if the row is still at `expected` (0: never saved), in one statement, so of
 * two saves naming the same revision exactly one wins. Returns the new revision, or undefined when
 * the row moved on.
 */
export async function compareAndSet(db: Queryable, key: string, expected: number, value: unknown, now: Date): Promise<number | undefined> {
  const json = sql`${JSON.stringify(value)}::jsonb`;
  const bumped = { value: json, updatedAt: now, revision: sql`${settings.revision} + 1` };
  const rows =
    expected === 0
      ? await db
          .insert(settings)
          .values({ key, value: json, updatedAt: now, revision: 1 })
          .onConflictDoUpdate({ target: settings.key, set: bumped, setWhere: eq(settings.revision, 0) })
          .returning({ revision: settings.revision })
      : await db
          .update(settings)
          .set(bumped)
          .where(and(eq(settings.key, key), eq(settings.revision, expected)))
          .returning({ revision: settings.revision });
  return rows[0]?.revision;
}
