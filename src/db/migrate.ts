import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgresDb } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { ADVISORY_LOCKS } from './advisory-locks.js';

/** `drizzle/` at the package root, found from `src/db` (tsx, Bun) or `dist/db` (built). */
export const migrationsFolder = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = join(dir, 'drizzle');
    if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('drizzle/ migrations folder not found next to the package');
})();

/** drizzle-kit's journal of the migrations this build ships, in order. */
export function readMigrationJournal(): { entries: Array<{ idx: number; tag: string; when: number }> } {
  return JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as ReturnType<typeof readMigrationJournal>;
}

// Any fixed 64-bit key: replicas starting together apply migrations one at a time.

/** An in-process PGlite (the tests' template): its driver is loaded here, never by the service's start. */
export async function migratePglite(client: PGlite): Promise<void> {
  const [{ drizzle: drizzlePglite }, { migrate: migratePgliteDb }] = await Promise.all([import('drizzle-orm/pglite'), import('drizzle-orm/pglite/migrator')]);
  await migratePgliteDb(drizzlePglite(client), { migrationsFolder });
}

/**
 * Runs on its own one-connection client so that the session lock and the migration share it.
 * `target` is a URL, or connection options (the embedded database's socket, src/db/embedded.ts).
 */
export async function migratePostgres(target: string | postgres.Options<Record<string, postgres.PostgresType>>): Promise<void> {
  const options = { max: 1, onnotice: () => {}, connect_timeout: 5 };
  const client = typeof target === 'string' ? postgres(target, options) : postgres({ ...target, ...options });
  try {
    await client`select pg_advisory_lock(${ADVISORY_LOCKS.migrations.toString()}::bigint)`;
    try {
      await migratePostgresDb(drizzlePostgres(client), { migrationsFolder });
    } finally {
      await client`select pg_advisory_unlock(${ADVISORY_LOCKS.migrations.toString()}::bigint)`;
    }
  } finally {
    await client.end({ timeout: 5 });
  }
}
