import { execFile } from 'node:child_process';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { Database } from './client.js';
import { readMigrationJournal } from './migrate.js';

const run = promisify(execFile);

/** Where a dump comes from and a restore goes to. */
export type DumpSource = { kind: 'postgres'; url: string } | { kind: 'pglite'; client: Pick<PGlite, 'dumpDataDir'> };

/** The file a kind's dump is kept in inside a bundle. */
export const DUMP_FILE = { postgres: 'database.pgdump', pglite: 'pgdata.tar.gz' } as const;

/**
 * Writes the whole database to `file`: pg_dump's custom format for PostgreSQL (every schema,
 * Drizzle's migration table included), PGlite's own data-directory dump for the embedded one.
 */
export async function dumpDatabase(source: DumpSource, file: string): Promise<void> {
  if (source.kind === 'postgres') {
    await run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--file=${file}`, `--dbname=${source.url}`]);
    return;
  }
  // In-process PGlite (the tests), or the embedded database's thread (src/db/embedded.ts).
  const dump = await source.client.dumpDataDir('gzip');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
}

/**
 * Replaces the database's contents with a dump of the same kind. PostgreSQL: pg_restore drops and
 * recreates every object in one transaction, so a failure leaves the database as it was. PGlite:
 * the dump is loaded into a new folder first and swapped in only once it opened.
 */
export async function restoreDatabase(target: { kind: 'postgres'; url: string } | { kind: 'pglite'; dir: string }, file: string): Promise<void> {
  if (target.kind === 'postgres') {
    await run('pg_restore', ['--clean', '--if-exists', '--single-transaction', '--no-owner', '--no-privileges', `--dbname=${target.url}`, file]);
    return;
  }
  const incoming = `${target.dir}.restoring`;
  await rm(incoming, { recursive: true, force: true });
  // Loaded only for a restore: the service's main thread has no other use for PGlite.
  const { PGlite } = await import('@electric-sql/pglite');
  const loaded = await PGlite.create(incoming, { loadDataDir: new Blob([await readFile(file)]) });
  await loaded.close();
  const previous = `${target.dir}.replaced`;
  await rm(previous, { recursive: true, force: true });
  await rename(target.dir, previous).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await rename(incoming, target.dir);
  await rm(previous, { recursive: true, force: true });
}

/** How many migrations the database has applied: its schema version. */
export async function appliedSchemaVersion(db: Database): Promise<number> {
  const result = await db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Array<{ n: number }>;
  return rows[0]?.n ?? 0;
}

/** How many migrations this build ships: the schema version it runs. */
export function shippedSchemaVersion(): number {
  return readMigrationJournal().entries.length;
}
