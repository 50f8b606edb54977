import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../../../../test/global-setup.js';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { ownedWorld, testWorlds, useTempDir } from '../../../../test/helpers/worlds.js';
import { LEASE_KEYS, takeLease } from '../../../coordination/index.js';
import { openPostgres, type DatabaseHandle } from '../../../db/client.js';
import { DomainError } from '../../../lib/errors.js';
import { holdWorld } from './lock.js';

/** A second connection pool to the same PostgreSQL database (a second replica); undefined on PGlite. */
async function secondHandle(handle: DatabaseHandle): Promise<DatabaseHandle | undefined> {
  const pg = inject('postgresTemplate');
  if (handle.kind !== 'postgres' || !pg) return undefined;
  const rows = (await handle.db.execute(sql`select current_database() as name`)) as unknown as Array<{ name: string }>;
  return openPostgres(withDatabase(pg.url, rows[0]!.name));
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  replica: number;
  arrived: number;
  /** Position among every writer that got the lock, or undefined when refused. */
  served?: number;
  code?: string;
  waitedMs: number;
}

/**
 * `count` writers to one world, issued one after another (their arrival order) and alternating
 * between `replicas`; each that gets the world's lock holds it for `holdMs` and lets go.
 */
async function writers(replicas: TestDeps[], world: string, count: number, holdMs: number, waitMs?: number): Promise<Outcome[]> {
  let served = 0;
  const started = Array.from({ length: count }, async (_, arrived): Promise<Outcome> => {
    const replica = arrived % replicas.length;
    const deps = replicas[replica]!;
    const began = performance.now();
    try {
      const lock = await holdWorld(deps, world, `writer-${arrived}`, 'file_write', { queueBehind: 'file_write', ...(waitMs ? { waitMs } : {}) });
      const position = served++;
      await pause(holdMs);
      await lock.release();
      return { replica, arrived, served: position, waitedMs: performance.now() - began };
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return { replica, arrived, code: err.code, waitedMs: performance.now() - began };
    }
  });
  return Promise.all(started);
}

describe('the world write queue', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  it('serves concurrent writers to one world in their arrival order on each replica, all within the bound', async () => {
    const deps = createTestDeps(database(), { overrides: { worlds: testWorlds(tempDir()) } });
    const other = await secondHandle(deps.database);
    try {
      // The second replica shares the database and the cluster, nothing in memory.
      const replica = other ? createTestDeps(other, { overrides: { cluster: deps.cluster, serverCache: deps.serverCache, worlds: testWorlds(tempDir()) } }) : undefined;
      const replicas = replica ? [deps, replica] : [deps];
      const outcomes = await writers(replicas, 'queued-world', 40, 2);
      const refused = outcomes.filter((o) => o.served === undefined);
      expect(refused).toEqual([]);
      for (let r = 0; r < replicas.length; r++) {
        const mine = outcomes.filter((o) => o.replica === r);
        const byService = [...mine].sort((a, b) => a.served! - b.served!).map((o) => o.arrived);
        expect(byService).toEqual(mine.map((o) => o.arrived));
      }
      const waits = outcomes.map((o) => o.waitedMs).sort((a, b) => a - b);
      console.log(
        `40 writers on ${replicas.length} replica(s), ${deps.database.kind}: waits p50 ${waits[20]!.toFixed(0)} ms, max ${waits[39]!.toFixed(0)} ms`,
      );
    } finally {
      await other?.close();
    }
  });

  it('answers 409 maintenance_in_progress with Retry-After to writers that waited the whole bound', async () => {
    const deps = createTestDeps(database(), { overrides: { worlds: testWorlds(tempDir()) } });
    // Another replica's writer holds the world and does not let go.
    await takeLease(deps.database.db, deps.clock.now(), { key: LEASE_KEYS.world('held-world'), holder: 'elsewhere', purpose: 'file_write', ttlMs: 60_000 });
    const outcomes = await writers([deps], 'held-world', 12, 0, 300);
    expect(outcomes.map((o) => o.code)).toEqual(Array(12).fill('maintenance_in_progress'));
    // Each waited its bound, and not the old 200 rounds of polling.
    for (const o of outcomes) expect(o.waitedMs).toBeGreaterThanOrEqual(290);
    console.log(`12 writers behind a held world, bound 300 ms: refused after ${outcomes.map((o) => o.waitedMs.toFixed(0)).join(', ')} ms`);
  });

  it('lets every concurrent PUT of one file answer 200 or a 409 after the bound, and keeps a 200 write', async () => {
    const deps = createTestDeps(database(), { overrides: { worlds: testWorlds(tempDir()) } });
    const { external } = createTestApps(deps);
    const { owner, name, folder } = await ownedWorld(deps);
    const body = (i: number) => ({ content: Buffer.from(`line ${i}\n`).toString('base64') });
    const began = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => external.request(`/api/v1/servers/${name}/file?path=queued.txt`, jsonRequest('PUT', body(i), owner.headers))),
    );
    const elapsed = performance.now() - began;
    const statuses = answers.map((a) => a.status);
    for (const status of statuses) expect([200, 409]).toContain(status);
    for (const refused of answers.filter((a) => a.status === 409)) {
      expect((await errorOf(refused)).code).toBe('maintenance_in_progress');
      expect(refused.headers.get('Retry-After')).toBe('1');
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(readFileSync(join(folder, 'queued.txt'), 'utf8')).toMatch(/^line \d+\n$/);
    console.log(`30 concurrent PUT /file on ${deps.database.kind}: ${statuses.filter((s) => s === 200).length} × 200, ${statuses.filter((s) => s === 409).length} × 409 in ${elapsed.toFixed(0)} ms`);

    // Behind a write that does not end, the answer is a 409 that says when to come back.
    await takeLease(deps.database.db, deps.clock.now(), { key: LEASE_KEYS.world(name), holder: 'elsewhere', purpose: 'file_write', ttlMs: 60_000 });
    const refused = await external.request(`/api/v1/servers/${name}/file?path=queued.txt`, jsonRequest('PUT', body(99), owner.headers));
    expect(refused.status).toBe(409);
    expect((await errorOf(refused)).code).toBe('maintenance_in_progress');
    expect(refused.headers.get('Retry-After')).toBe('1');
  });
});
