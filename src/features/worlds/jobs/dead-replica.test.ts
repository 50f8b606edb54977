import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { ownedWorld, testWorlds, useTempDir } from '../../../../test/helpers/worlds.js';
import { SimulatedCluster } from '../../../adapters/cluster/simulated.js';
import { leases } from '../../../db/schema/coordination.js';
import { worldJobs } from '../../../db/schema/worlds.js';
import { ManualClock } from '../../../lib/clock.js';
import { worldsTasks } from '../housekeeping.js';
import { HEARTBEAT_BEAT_MS, HEARTBEAT_TTL_MS } from '../../../coordination/index.js';
import { deadLockTakers, LOCK_LEASE_MS } from './lock.js';
import { startWorldJob } from './service.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const HOUR = 3_600_000;

/**
 * Issue 32: a replica killed in the middle of a world job (its heartbeat stops, no goodbye) must
 * not hold the world's writes off for the lock's 60 s: the survivor judges it dead from its own
 * observation of the heartbeat (TTL 10 s), takes the world over and fails the dead job at once.
 * Two replicas on one database, one cluster and one volume folder; the victim's clock runs an
 * hour ahead, so its lock's lease would hold the survivor off for an hour by the clocks alone.
 */
describe('a dead replica\'s world lock', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir('felis-dead-replica-');

  function twoReplicas(): [TestDeps, TestDeps] {
    const root = tempDir();
    const cluster = new SimulatedCluster({ clock: new ManualClock('2026-06-01T12:00:00.000Z') });
    const make = (clock: ManualClock, pod: string) =>
      createTestDeps(database(), { env: { POD_NAME: pod }, overrides: { worlds: testWorlds(root), cluster, clock } });
    return [make(new ManualClock(new Date(Date.parse('2026-06-01T12:00:00.000Z') + HOUR)), 'felis-a'), make(new ManualClock('2026-06-01T12:00:00.000Z'), 'felis-b')];
  }

  /** Real time passing for both: each living replica beats every HEARTBEAT_BEAT_MS. */
  async function pass(ms: number, replicas: TestDeps[], living: TestDeps[]) {
    for (let t = 0; t < ms; t += HEARTBEAT_BEAT_MS) {
      for (const r of replicas) r.clock.advance(HEARTBEAT_BEAT_MS);
      for (const r of living) await r.heartbeat.beat();
    }
  }

  it('is taken over by a file write on the survivor within the heartbeat TTL, and the dead job fails at once', async () => {
    const [a, b] = twoReplicas();
    const { owner, name, folder } = await ownedWorld(b);
    writeFileSync(join(folder, 'server.properties'), 'motd=before\n');
    mkdirSync(join(folder, 'world'), { recursive: true });
    const survivor = createTestApps(b).external;
    const write = (text: string) => survivor.request(`/api/v1/servers/${name}/file?path=server.properties`, jsonRequest('PUT', { content: b64(text) }, owner.headers));
    // The survivor's reaction to a death is wired as the service wires it (the worlds' tasks).
    const onDeath = worldsTasks(b, b.replica).find((t) => t.name === 'world_locks_of_dead_replicas')!;
    onDeath.start();

    await a.heartbeat.beat();
    await b.heartbeat.beat();
    // The victim runs a job of its own process on the world (a backup whose step has not ended).
    let endStep!: () => void;
    const step = new Promise<void>((resolve) => (endStep = resolve));
    const job = await startWorldJob(a, { serverName: name, kind: 'backup', lockKind: 'backup' }, () => step);
    const [lock] = await b.database.db.select().from(leases).where(eq(leases.key, `world:${name}`));
    expect(lock).toMatchObject({ holder: job.jobId, replica: a.replica });
    expect(lock!.leaseUntil.getTime() - b.clock.now().getTime()).toBeGreaterThan(HOUR);

    // While the victim lives, the survivor's write is refused.
    await pass(6_000, [a, b], [a, b]);
    expect((await errorOf(await write('motd=too early\n'))).code).toBe('maintenance_in_progress');

    // Killed: its heartbeat stops, no goodbye. Until the TTL has passed by the survivor's clock, still refused.
    await pass(HEARTBEAT_TTL_MS - HEARTBEAT_BEAT_MS, [a, b], [b]);
    expect(b.heartbeat.deadReplicas()).not.toContain(a.replica);
    const early = await write('motd=still too early\n');
    expect(early.status).toBe(409);
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=before\n');

    // One beat later the survivor judges it dead: the write goes through, 12 s after the kill, not 60 s (nor an hour).
    await pass(HEARTBEAT_BEAT_MS * 2, [a, b], [b]);
    expect(b.heartbeat.deadReplicas()).toContain(a.replica);
    const written = await write('motd=after the kill\n');
    expect(written.status).toBe(200);
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=after the kill\n');

    // The dead job was failed by the sweep on its death, though it is far younger than a lock's lease.
    await expect.poll(async () => (await b.database.db.select().from(worldJobs).where(eq(worldJobs.id, job.jobId)))[0]?.state).toBe('failed');
    const [row] = await b.database.db.select().from(worldJobs).where(eq(worldJobs.id, job.jobId));
    expect(row!.message).toBe('the replica running this job stopped');
    // By the clocks alone it would have waited for the lock's lease, which the victim's clock put an hour ahead.
    expect(row!.startedAt.getTime() + LOCK_LEASE_MS).toBeGreaterThan(b.clock.now().getTime() + HOUR);

    // A new job on the survivor takes the world too (the write let go of it).
    const backup = await survivor.request(`/api/v1/servers/${name}/backup`, { method: 'POST', headers: owner.headers });
    expect(backup.status).toBe(202);
    await b.worlds.jobs.idle();
    await onDeath.stop();
    endStep(); // the victim's process is gone; its promise ends here only to free the test's tracker
    await job.done;
    await a.worlds.jobs.idle();
  });

  it('keeps a living replica\'s lock whatever the clocks say, and leaves a cluster Job\'s lock to its lease', async () => {
    const [a, b] = twoReplicas();
    const { owner, name } = await ownedWorld(b);
    const survivor = createTestApps(b).external;
    const write = () => survivor.request(`/api/v1/servers/${name}/file?path=x.txt`, jsonRequest('PUT', { content: b64('x') }, owner.headers));
    await a.heartbeat.beat();
    let endStep!: () => void;
    const job = await startWorldJob(a, { serverName: name, kind: 'backup', lockKind: 'backup' }, () => new Promise<void>((resolve) => (endStep = resolve)));
    // A whole minute of both beating: the victim is alive, its lock holds.
    await pass(60_000, [a, b], [a, b]);
    expect(b.heartbeat.deadReplicas()).not.toContain(a.replica);
    expect((await errorOf(await write())).code).toBe('maintenance_in_progress');

    // Without local folders (a cluster's Jobs run the world's work and outlive their starter) the
    // dead list frees nothing: the lock waits for its lease (adoption.ts keeps it while the Job runs).
    await pass(HEARTBEAT_TTL_MS + HEARTBEAT_BEAT_MS, [a, b], [b]);
    expect(deadLockTakers(b)).toContain(a.replica);
    expect(deadLockTakers({ heartbeat: b.heartbeat, worlds: { ...b.worlds, folders: undefined } })).toEqual([]);
    endStep();
    await job.done;
  });
});
