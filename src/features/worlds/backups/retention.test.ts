import { and, eq } from 'drizzle-orm';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, type TestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { addServer } from '../../../../test/helpers/servers.js';
import { claimFor, testWorlds, useTempDir, worldMember } from '../../../../test/helpers/worlds.js';
import { LocalBackupStore } from '../../../adapters/backup-store/local.js';
import { worldBackups, worldExports, worldJobs } from '../../../db/schema/worlds.js';
import { pruneScheduledBackups, retentionPlan, type KeepCounts } from './retention.js';
import type { BackupView } from './schema.js';

const DAY = 86_400_000;
const KEEP: KeepCounts = { newest: 3, daily: 7, weekly: 4, monthly: 12 };

/**
 * The kept set written from the definition, apart from the code: the newest N; for each period, the
 * newest backup of each of the N latest periods that have one.
 */
function oracle(dates: Date[], keep: KeepCounts): Set<number> {
  const sorted = [...dates].map((d) => d.getTime()).sort((a, b) => b - a);
  const kept = new Set(sorted.slice(0, keep.newest));
  // An ISO week is named by its Monday.
  const isoWeek = (t: number) => new Date(t - ((new Date(t).getUTCDay() + 6) % 7) * DAY).toISOString().slice(0, 10);
  const periods: Array<[number, (t: number) => string]> = [
    [keep.daily, (t) => new Date(t).toISOString().slice(0, 10)],
    [keep.weekly, isoWeek],
    [keep.monthly, (t) => new Date(t).toISOString().slice(0, 7)],
  ];
  for (const [count, bucket] of periods) {
    const newestOf = new Map<string, number>();
    for (const t of sorted) if (!newestOf.has(bucket(t))) newestOf.set(bucket(t), t);
    [...newestOf.values()].slice(0, count).forEach((t) => kept.add(t));
  }
  return kept;
}

describe('retention of scheduled backups', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  function setUp() {
    const root = tempDir();
    const worlds = testWorlds(root, new LocalBackupStore(join(root, 'backups')));
    return createTestDeps(database(), { overrides: { worlds } });
  }

  async function nightly(deps: TestDeps, serverName: string, at: Date, options: { verified?: boolean; reason?: 'scheduled' | 'manual' } = {}) {
    const [row] = await deps.database.db
      .insert(worldBackups)
      .values({
        serverName,
        reason: options.reason ?? 'scheduled',
        status: 'present',
        storageKey: `worlds/${serverName}/${at.getTime()}.tar.gz`,
        sha256: 'ab'.repeat(32),
        sizeBytes: 100,
        verifiedAt: options.verified === false ? null : at,
        createdAt: at,
        expiresAt: options.reason === 'manual' ? new Date(at.getTime() + 30 * DAY) : new Date('9999-12-31T00:00:00Z'),
      })
      .returning();
    return row!;
  }

  const present = async (deps: TestDeps, serverName: string) =>
    deps.database.db
      .select()
      .from(worldBackups)
      .where(and(eq(worldBackups.serverName, serverName), eq(worldBackups.status, 'present')));

  // 400 backups and 400 prunings: 20 s at load 12-20, past the default time-out (docs/notes/suite-time.md).
  it('keeps exactly the tiers over 400 nightly backups, pruned after each one, and names each one’s tier', { timeout: 90_000 }, async () => {
    const deps = setUp();
    const { name } = addServer(deps).spec;
    const manual = await nightly(deps, name, new Date('2025-03-01T10:00:00Z'), { reason: 'manual' });
    const start = Date.parse('2025-03-01T03:00:00Z');
    const made: Date[] = [];
    for (let day = 0; day < 400; day++) {
      const at = new Date(start + day * DAY);
      made.push(at);
      await nightly(deps, name, at);
      await pruneScheduledBackups(deps, name);
    }
    const rows = await present(deps, name);
    const scheduled = rows.filter((r) => r.reason === 'scheduled');
    const expected = oracle(made, KEEP);
    expect(new Set(scheduled.map((r) => r.createdAt.getTime()))).toEqual(expected);
    // 3 newest within 7 days; 4 weeks (one more than the days reach); 12 months (the last ones overlap).
    expect(scheduled.length).toBe(expected.size);
    expect(scheduled.length).toBeLessThanOrEqual(KEEP.newest + KEEP.daily + KEEP.weekly + KEEP.monthly);
    // The manual backup keeps its own expiry: never touched by the rotation.
    expect(rows.map((r) => r.id)).toContain(manual.id);
    const byTier = new Map<string, number>();
    for (const r of scheduled) byTier.set(r.retention!, (byTier.get(r.retention!) ?? 0) + 1);
    expect(byTier.get('monthly')).toBe(12);
    expect([...byTier.keys()].every((t) => ['monthly', 'weekly', 'daily', 'newest'].includes(t))).toBe(true);
    // The newest is kept by the longest-lived tier that holds it (it is this month's newest).
    const newest = scheduled.reduce((a, b) => (a.createdAt > b.createdAt ? a : b));
    expect(newest.retention).toBe('monthly');
  });

  it('never deletes the newest verified backup, nor one a restore or an export is reading', async () => {
    const deps = setUp();
    const { name } = addServer(deps).spec;
    const start = Date.parse('2026-01-01T03:00:00Z');
    // Sixty nights; the last twenty could not be read back (unverified).
    const rows = [];
    for (let day = 0; day < 60; day++) rows.push(await nightly(deps, name, new Date(start + day * DAY), { verified: day < 40 }));
    const lastVerified = rows[39]!;
    const restoring = rows[5]!;
    const exporting = rows[6]!;
    const owner = await worldMember(deps);
    await deps.database.db.insert(worldJobs).values({
      serverName: name,
      kind: 'restore',
      state: 'running',
      backupId: restoring.id,
      lockHolder: crypto.randomUUID(),
      startedAt: deps.clock.now(),
    });
    await deps.database.db.insert(worldExports).values({
      ticket: crypto.randomUUID(),
      serverName: name,
      requestedBy: owner.id,
      source: 'backup',
      state: 'ready',
      storageKey: exporting.storageKey,
      filename: 'x.tar.gz',
      contentType: 'application/gzip',
      createdAt: deps.clock.now(),
      expiresAt: new Date(deps.clock.now().getTime() + DAY),
    });
    await pruneScheduledBackups(deps, name);
    const kept = new Map((await present(deps, name)).map((r) => [r.id, r.retention]));
    expect(kept.get(lastVerified.id)).toBe('newest_verified');
    expect(kept.get(restoring.id)).toBe('in_use');
    expect(kept.get(exporting.id)).toBe('in_use');
    expect(kept.get(rows[20]!.id)).toBeUndefined(); // neither tiered, verified-newest nor in use

    // Once the restore ends, its backup goes at the next rotation.
    await deps.database.db.update(worldJobs).set({ state: 'succeeded' }).where(eq(worldJobs.backupId, restoring.id));
    await pruneScheduledBackups(deps, name);
    const after = new Set((await present(deps, name)).map((r) => r.id));
    expect(after.has(restoring.id)).toBe(false);
    expect(after.has(exporting.id)).toBe(true);
  });

  it('does not let a corrupt backup hold a tier, and ranks the tiers the same on every replica', () => {
    const at = (iso: string) => new Date(iso);
    const candidates = [
      { id: 'a', createdAt: at('2026-03-03T03:00:00Z'), verified: false, corrupt: true },
      { id: 'b', createdAt: at('2026-03-02T03:00:00Z'), verified: true, corrupt: false },
      { id: 'c', createdAt: at('2026-02-27T03:00:00Z'), verified: true, corrupt: false },
    ];
    const plan = retentionPlan(candidates, { newest: 1, daily: 1, weekly: 0, monthly: 2 });
    expect([...plan.entries()].sort()).toEqual([
      ['b', 'monthly'],
      ['c', 'monthly'],
    ]);
    expect(retentionPlan([...candidates].reverse(), { newest: 1, daily: 1, weekly: 0, monthly: 2 })).toEqual(plan);
  });

  it('shows the tier that keeps a scheduled backup in the backup list', async () => {
    const deps = setUp();
    const { external } = createTestApps(deps);
    const owner = await worldMember(deps);
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, owner.id);
    const row = await nightly(deps, name, new Date('2026-05-31T03:00:00Z'));
    await deps.database.db.update(worldBackups).set({ formerOwner: owner.id }).where(eq(worldBackups.id, row.id));
    await pruneScheduledBackups(deps, name);
    const res = await external.request(`/api/v1/backups?server=${name}`, { headers: owner.headers });
    const page = (await res.json()) as { backups: BackupView[] };
    expect(page.backups).toEqual([expect.objectContaining({ id: row.id, reason: 'scheduled', retention: 'monthly' })]);
  });
});
