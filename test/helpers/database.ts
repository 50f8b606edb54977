import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { afterAll, beforeAll, inject } from 'vitest';
import { openPglite, openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { withDatabase } from '../global-setup.js';

/**
 * A fresh migrated database for one test file: a PGlite loaded from the run's template, or,
 * when TEST_DATABASE_URL is set, a PostgreSQL database copied from the run's template database.
 */
export async function createTestDatabase(): Promise<DatabaseHandle> {
  const url = await createPostgresTestDatabase();
  if (url) return openPostgres(url);
  const dump = readFileSync(inject('pgliteTemplate'));
  const client = await PGlite.create({ loadDataDir: new Blob([dump]) });
  return openPglite(undefined, client);
}

/**
 * When TEST_DATABASE_URL is set: a new PostgreSQL database copied from the run's migrated
 * template, by URL (for a service that opens its own connection). Undefined otherwise.
 */
export async function createPostgresTestDatabase(): Promise<string | undefined> {
  const pg = inject('postgresTemplate');
  if (!pg) return undefined;
  const name = `${pg.database.replace(/_tpl$/, '')}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}" template "${pg.database}"`);
  } finally {
    await admin.end();
  }
  return withDatabase(pg.url, name);
}

/** Registers hooks that open one database for the file and close it afterwards. */
export function useTestDatabase(): () => DatabaseHandle {
  let handle: DatabaseHandle | undefined;
  beforeAll(async () => {
    handle = await createTestDatabase();
  });
  afterAll(async () => {
    await handle?.close();
  });
  return () => {
    if (!handle) throw new Error('useTestDatabase(): the database is opened in beforeAll');
    return handle;
  };
}
