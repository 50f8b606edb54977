import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLog } from '../../test/helpers/log.js';
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

  it('is kept by the first new folder and starts the next one, migrated, without an initdb', async () => {
    const first = await openEmbedded(join(dir, 'one'));
    await first.close();
    expect(seeds()).toEqual([expect.stringMatching(/^embedded-seed-[0-9a-f]{16}-[0-9a-f]{64}\.tar\.gz$/)]);

    const captured = captureLog('info');
    const second = await openEmbedded(join(dir, 'two'), captured.log);
    try {
      expect(captured.lines().map((l) => l.msg)).toContain('embedded database made from the copy kept in the cache folder');
      const rows = (await second.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)) as unknown as Array<{ n: number }>;
      expect(rows[0]?.n).toBe(readMigrationJournal().entries.length);
      await second.migrate(); // nothing left to apply
    } finally {
      await second.close();
    }
    expect(seeds()).toHaveLength(1);
  }, 180_000); // one initdb: minutes on a loaded 2-core machine

  it('is dropped, not loaded, when its bytes are not the ones written', () => {
    const [name] = seeds();
    writeFileSync(join(dir, 'cache', 'felis', name!), 'not a tarball');
    expect(findSeed()).toBeUndefined();
    expect(seeds()).toEqual([]);
  });
});
