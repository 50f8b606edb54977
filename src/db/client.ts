import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Logger } from '../lib/logger.js';
import { PostgresChangeFeed, CHANGE_CHANNEL, type ChangeFeed } from './change-feed.js';
import type { DumpSource } from './dump.js';
import { DatabaseGuard, type GuardOptions } from './guard.js';
import { lockEmbeddedDatabase } from './embedded-lock.js';
import { openEmbedded } from './embedded.js';
import { guardPglite, guardPostgres } from './guarded-clients.js';
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
  /** What a dump is taken from (src/db/dump.ts). */
  source: DumpSource;
  /** The embedded database's folder; undefined for PostgreSQL and for a throw-away `memory:` one. */
  dir?: string;
  /** Resolves when the database answers, rejects after `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  /** Bounds every statement's wait and answers at once while the database is down. */
  guard: DatabaseGuard;
  /** Applies the migrations in `drizzle/` that this database has not seen. */
  migrate(): Promise<void>;
  /**
   * This database's feed of changes other processes commit to what the session check caches
   * (src/db/change-feed.ts), made on the first call and closed with the handle. Absent for the
   * tests' in-process PGlite, whose readers fall back to a short lifetime.
   */
  changeFeed?(): ChangeFeed;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** `postgres://…`, `memory:`, or undefined for an embedded database in `dataDir/db`. */
  url: string | undefined;
  dataDir: string;
  migrate?: boolean;
  /** Where the guard says that the database went away and came back. */
  log?: Pick<Logger, 'warn' | 'info'>;
}

/** The guard's log lines: one when the database stops answering, one when it answers again. */
export function guardLogging(log: Pick<Logger, 'warn' | 'info'> | undefined): Pick<GuardOptions, 'onDown' | 'onUp'> {
  return {
    onDown: (reason) => log?.warn({ dependency: 'database', reason }, 'database unreachable: answering 503 until it answers again'),
    onUp: () => log?.info({ dependency: 'database' }, 'database answers again'),
  };
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  // The embedded database runs on a thread of its own behind a socket (src/db/embedded.ts);
  // openPglite() below, in this thread, is left to the tests' throw-away databases.
  const handle = options.url?.startsWith('postgres')
    ? openPostgres(options.url, options.log)
    : await openEmbedded(options.url === 'memory:' ? undefined : join(options.dataDir, 'db'), options.log);
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

export async function openPglite(dir: string | undefined, existing?: PGlite, log?: OpenDatabaseOptions['log']): Promise<DatabaseHandle> {
  if (dir) mkdirSync(dir, { recursive: true });
  const unlock = dir && !existing ? lockEmbeddedDatabase(dir) : () => {};
  let client: PGlite;
  let drizzlePglite: typeof import('drizzle-orm/pglite').drizzle;
  try {
    // Loaded here, not with the module: the service's own database runs PGlite on its thread
    // (embedded.ts), and its main thread never needs PGlite's driver (~600 KB of script at start).
    [client, { drizzle: drizzlePglite }] = await Promise.all([existing ?? import('@electric-sql/pglite').then(({ PGlite }) => PGlite.create(dir)), import('drizzle-orm/pglite')]);
  } catch (err) {
    unlock();
    throw err;
  }
  const guard = new DatabaseGuard({ probe: () => client.query('select 1').then(() => undefined), ...guardLogging(log) });
  const db = drizzlePglite(guardPglite(client, guard), { schema }) as unknown as Database;
  return {
    db,
    kind: 'pglite',
    source: { kind: 'pglite', client },
    dir,
    guard,
    ping: (timeoutMs = 2000) => withTimeout(client.query('select 1').then(() => undefined), timeoutMs, 'database'),
    migrate: () => migratePglite(client),
    close: async () => {
      guard.close();
      try {
        if (!client.closed) await client.close();
      } finally {
        unlock();
      }
    },
  };
}

/**
 * One `select 1` on a connection of its own, so that a pool stuck on a silent server cannot hold it.
 * No type fetch: postgres-js reads the array types as a connection opens, in a promise nobody
 * awaits, so a server that drops the connection then (as one going down or coming back does, which
 * is when the guard probes) became an unhandled rejection; `select 1` needs no array type.
 */
async function probePostgres(url: string, timeoutMs: number): Promise<void> {
  const probe = postgres(url, { max: 1, connect_timeout: Math.ceil(timeoutMs / 1000), onnotice: () => {}, fetch_types: false });
  try {
    await withTimeout(probe`select 1`, timeoutMs, 'database');
  } finally {
    void probe.end({ timeout: 0 });
  }
}

export function openPostgres(url: string, log?: OpenDatabaseOptions['log']): DatabaseHandle {
  const guard = new DatabaseGuard({ probe: () => probePostgres(url, 1500), ...guardLogging(log) });
  const client = postgres(url, {
    max: 10,
    connect_timeout: 3,
    idle_timeout: 60,
    onnotice: () => {},
    // The server gives up on a statement when the guard does, so a slow one does not run on unseen.
    connection: { application_name: 'felis', statement_timeout: guard.queryDeadlineMs },
  });
  const db = drizzlePostgres(guardPostgres(client, guard), { schema }) as unknown as Database;
  let changes: PostgresChangeFeed | undefined;
  return {
    db,
    kind: 'postgres',
    source: { kind: 'postgres', url },
    guard,
    ping: (timeoutMs = 2000) =>
      guard.down ? Promise.reject(new Error('database does not answer')) : withTimeout(client`select 1`.then(() => undefined), timeoutMs, 'database'),
    migrate: () => migratePostgres(url),
    changeFeed: () => (changes ??= new PostgresChangeFeed({ url, log, send: (payload) => client`select pg_notify(${CHANGE_CHANNEL}, ${payload})` })),
    close: async () => {
      guard.close();
      await changes?.close();
      await client.end({ timeout: 5 });
    },
  };
}
