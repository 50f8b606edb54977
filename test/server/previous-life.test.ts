import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LEASE_KEYS } from '../../src/coordination/index.js';
import { eventStreams } from '../../src/db/schema/console.js';
import { leases } from '../../src/db/schema/coordination.js';
import type { Deps } from '../../src/deps.js';
import { startTestService } from '../helpers/service.js';
import { createUser } from '../helpers/sessions.js';
import { ThrowawayPostgres } from '../helpers/throwaway-postgres.js';

/** What a life killed mid-backup leaves: a world lock, a loop's round, a stream slot, a partial archive. */
async function leaveBehind(deps: Deps, dataDir: string, life: string) {
  const now = new Date();
  const until = new Date(now.getTime() + 60_000);
  await deps.database.db.insert(leases).values([
    { key: LEASE_KEYS.world('killed'), holder: '0b6c3f1e-5b1a-4f7e-9c1d-2a3b4c5d6e7f', purpose: 'backup', acquiredAt: now, leaseUntil: until, replica: life },
    { key: LEASE_KEYS.loop('killed-round'), holder: life, purpose: 'killed-round', acquiredAt: now, leaseUntil: until },
  ]);
  const user = await createUser(deps);
  await deps.database.db.insert(eventStreams).values({ userId: user.id, kind: 'console', target: 'killed', openedAt: now, expiresAt: new Date(now.getTime() + 90_000), replica: life });
  const partial = join(dataDir, 'backups', 'backups', '0b6c3f1e.tar.gz.partial-4242-1700000000000');
  mkdirSync(join(dataDir, 'backups', 'backups'), { recursive: true });
  writeFileSync(partial, Buffer.alloc(1024));
  const old = new Date(Date.now() - 60_000);
  utimesSync(partial, old, old);
  return { partial };
}

const keysOf = async (deps: Deps) => (await deps.database.db.select({ key: leases.key }).from(leases)).map((l) => l.key).sort();

describe('what a previous life of this replica left (issue 30, item 6)', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'felis-previous-life-'));
    dirs.push(dir);
    return dir;
  };
  let pg: ThrowawayPostgres | undefined;
  afterAll(async () => {
    await pg?.destroy();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('on the embedded database: every lease, stream slot and partial archive is gone at the next start', async () => {
    const dataDir = tempDir();
    const env = { DATABASE_URL: undefined, DATA_DIR: dataDir };
    const first = await startTestService(env);
    let partial: string;
    try {
      ({ partial } = await leaveBehind(first.deps, dataDir, first.deps.replica));
    } finally {
      await first.stop();
    }
    const second = await startTestService(env);
    try {
      const db = second.deps.database.db;
      expect(await keysOf(second.deps)).not.toContain(LEASE_KEYS.world('killed'));
      expect(await keysOf(second.deps)).not.toContain(LEASE_KEYS.loop('killed-round'));
      expect(await db.select().from(eventStreams)).toEqual([]);
      expect(existsSync(partial!)).toBe(false);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it("on PostgreSQL: the leases and slots of this pod's previous life, not another pod's", async () => {
    pg = await ThrowawayPostgres.create();
    const dataDir = tempDir();
    const env = { DATABASE_URL: pg.url, DATA_DIR: dataDir, POD_NAME: 'felis-0' };
    const first = await startTestService(env);
    try {
      await leaveBehind(first.deps, dataDir, first.deps.replica);
      const now = new Date();
      await first.deps.database.db.insert(leases).values({ key: LEASE_KEYS.loop('other-pod'), holder: 'felis-1/alive', purpose: 'other-pod', acquiredAt: now, leaseUntil: new Date(now.getTime() + 60_000) });
    } finally {
      await first.stop();
    }
    const second = await startTestService(env);
    try {
      const keys = await keysOf(second.deps);
      expect(keys).not.toContain(LEASE_KEYS.world('killed'));
      expect(keys).not.toContain(LEASE_KEYS.loop('killed-round'));
      expect(keys).toContain(LEASE_KEYS.loop('other-pod'));
      expect(await second.deps.database.db.select().from(eventStreams)).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
