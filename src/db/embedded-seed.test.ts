import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { list } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from './embedded-lock.js';
import { openEmbedded } from './embedded.js';
import { findSeed } from './embedded-seed.js';
import { readMigrationJournal } from './migrate.js';

describe('the kept copy of a new embedded database', () => {
  let dir: string;
  let cache: string | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'felis-seed-'));
    cache = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = join(dir, 'cache');
  });
  afterAll(() => {
    if (cache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = cache;
    rmSync(dir, { recursive: true, force: true });
  });
  const seeds = () => (existsSync(join(dir, 'cache', 'felis')) ? readdirSync(join(dir, 'cache', 'felis')) : []);

  it('is made by the first new database, kept, and starts the next ones, migrated, with no file but PostgreSQL\'s', async () => {
    const systemOf = async (handle: Awaited<ReturnType<typeof openEmbedded>>) =>
      ((await handle.db.execute(sql`select system_identifier::text as id from pg_control_system()`)) as unknown as Array<{ id: string }>)[0]!.id;
    const first = await openEmbedded(join(dir, 'one'));
    const made = await systemOf(first).finally(() => first.close());
    expect(seeds()).toEqual([expect.stringMatching(/^embedded-seed-[0-9a-f]{16}-[0-9a-f]{64}\.tar\.gz$/)]);

    for (const next of [join(dir, 'two'), undefined]) {
      const handle = await openEmbedded(next);
      try {
        // An initdb draws a new system identifier; a database loaded from the seed has the seed's.
        expect(await systemOf(handle)).toBe(made);
        const rows = (await handle.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)) as unknown as Array<{ n: number }>;
        expect(rows[0]?.n).toBe(readMigrationJournal().entries.length);
        await handle.migrate(); // nothing left to apply
      } finally {
        await handle.close();
      }
    }
    expect(seeds()).toHaveLength(1);
    // A folder holds its opener's lock file; the seed never does (it is made in memory), so a new
    // folder loaded from it holds no stranger's lock.
    const entries: string[] = [];
    await list({ file: join(dir, 'cache', 'felis', seeds()[0]!), onReadEntry: (entry) => void entries.push(entry.path) });
    expect(entries.some((path) => path.endsWith('PG_VERSION'))).toBe(true);
    expect(entries.some((path) => path.endsWith(LOCK_FILE))).toBe(false);
  }, 180_000); // one initdb: minutes on a loaded 2-core machine

  it('is dropped, not loaded, when its bytes are not the ones written', () => {
    const [name] = seeds();
    writeFileSync(join(dir, 'cache', 'felis', name!), 'not a tarball');
    expect(findSeed()).toBeUndefined();
    expect(seeds()).toEqual([]);
  });
});
