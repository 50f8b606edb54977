import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema/index.js';
import { migratePglite, migratePostgres } from './migrate.js';

export type Schema = typeof schema;
/** The common face of the PGlite and postgres-js drivers; features only ever see this. */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];
/** A database or a transaction in it: services take this so a caller can pass its transaction. */
export type Queryable = Database | Transaction;

export interface DatabaseHandle {
  db: Database;
  kind: 'pglite' | 'postgres';
  /** Resolves when the database answers, rejects after `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  /** Applies the migrations in `drizzle/` that this database has not seen. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** `postgres://…`, `memory:`, or undefined for an embedded database in `dataDir/db`. */
  url: string | undefined;
  dataDir: string;
  migrate?: boolean;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const handle = options.url?.startsWith('postgres')
    ? openPostgres(options.url)
    : await openPglite(options.url === 'memory:' ? undefined : join(options.dataDir, 'db'));
  if (options.migrate !== false) {
    try {
      await handle.migrate();
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
  return handle;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function openPglite(dir: string | undefined, existing?: PGlite): Promise<DatabaseHandle> {
  if (dir) mkdirSync(dir, { recursive: true });
  const client = existing ?? (await PGlite.create(dir));
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  return {
    db,
    kind: 'pglite',
    ping: (timeoutMs = 2000) => withTimeout(db.execute(sql`select 1`).then(() => undefined), timeoutMs, 'database'),
    migrate: () => migratePglite(client),
    close: async () => {
      if (!client.closed) await client.close();
    },
  };
}

export function openPostgres(url: string): DatabaseHandle {
  const client = postgres(url, {
    max: 10,
    connect_timeout: 5,
    idle_timeout: 60,
    onnotice: () => {},
    connection: { application_name: 'felis' },
  });
  const db = drizzlePostgres(client, { schema }) as unknown as Database;
  return {
    db,
    kind: 'postgres',
    ping: (timeoutMs = 2000) => withTimeout(client`select 1`.then(() => undefined), timeoutMs, 'database'),
    migrate: () => migratePostgres(url),
    close: () => client.end({ timeout: 5 }),
  };
}
