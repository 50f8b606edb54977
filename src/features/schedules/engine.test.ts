import { and, eq } from 'drizzle-orm';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { LEASE_KEYS, releaseLease, takeLease } from '../../coordination/index.js';
import { auditLog } from '../../db/schema/audit.js';
import { webhookDeliveries } from '../../db/schema/notifications.js';
import { serverRestarts } from '../../db/schema/servers.js';
import { worldBackups } from '../../db/schema/worlds.js';
import { createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addWebhookEndpoint } from '../../../test/helpers/webhooks.js';
import { runServer, settle, useScheduleRig } from '../../../test/helpers/schedules.js';
import { addServer } from '../../../test/helpers/servers.js';
import { worldMember } from '../../../test/helpers/worlds.js';
import { syncedCache } from '../servers/index.js';
import { beginRun, claimRun, CLAIMED_STALE_MS, STEP_WAIT_MS, tickSchedules, type ScheduleRow } from './engine.js';
import { nextRun } from './next-run.js';

const database = useTestDatabase();
const rig = useScheduleRig(database);

const MINUTE = 60_000;

/** Deps whose RCON reaches a TCP peer, with world folders and a local store; a server owned by a member. */
async function setUp(start?: string) {
  const set = await rig(worldMember, start);
  const said = () => set.peer.game.received.filter((c) => c.startsWith('say '));
  return { ...set, said };
}

/** Another replica: its own Deps (its own replica name, tasks and loops) on the same database, cluster (and its cache), clock, RCON and store. */
function replicaOf(deps: TestDeps): TestDeps {
  return createTestDeps(deps.database, { overrides: { cluster: deps.cluster, serverCache: deps.serverCache, clock: deps.clock, rcon: deps.rcon, worlds: deps.worlds } });
}

const run = runServer;

const runAudits = (deps: TestDeps, name: string) =>
  deps.database.db.select().from(auditLog).where(and(eq(auditLog.target, name), eq(auditLog.action, 'schedule.run')));

describe('the schedule runner', () => {
  it('runs a daily command at 02:30 Berlin time every day of March, across the night the clocks skip it', async () => {
    const { deps, name, schedule, row, peer } = await setUp('2026-03-01T00:00:00.000Z');
    await run(deps, name);
    const { id } = await schedule({ action: 'command', command: 'say good night', minute_of_day: 150, weekdays: 0x7f, timezone: 'Europe/Berlin' });
    const ranAt: string[] = [];
    for (let day = 0; day < 31; day++) {
      const due = (await row(id)).nextRunAt!;
      // A round comes some seconds after the due time (the rounds are a minute apart).
      deps.clock.set(new Date(due.getTime() + 41_000));
      await tickSchedules(deps, 'replica-a');
      const after = await row(id);
      expect(after).toMatchObject({ lastResult: 'ok', runState: null });
      ranAt.push(DateTime.fromJSDate(due, { zone: 'Europe/Berlin' }).toFormat('dd HH:mm'));
    }
    expect(ranAt).toEqual(Array.from({ length: 31 }, (_, i) => `${String(i + 1).padStart(2, '0')} ${i === 28 ? '03:30' : '02:30'}`));
    expect(peer.game.received.filter((c) => c === 'say good night')).toHaveLength(31);
    expect(await runAudits(deps, name)).toHaveLength(31);
    expect((await row(id)).nextRunAt!.toISOString()).toBe('2026-04-01T00:30:00.000Z');
  });

  it('makes a due run once when two replicas race for it, and once when a run on request races the round', async () => {
    const { deps, name, schedule, row, peer } = await setUp();
    await run(deps, name);
    const { id, nextRunAt } = await schedule({ action: 'command', command: 'say once', every_minutes: 15, weekdays: 0x7f, timezone: 'UTC' });
    deps.clock.set(new Date(nextRunAt!.getTime() + 1_000));
    const [b, c] = [replicaOf(deps), replicaOf(deps)];
    await Promise.all([tickSchedules(deps, 'replica-a'), tickSchedules(b, 'replica-b'), tickSchedules(c, 'replica-c')]);
    expect(peer.game.received.filter((c) => c === 'say once')).toHaveLength(1);
    expect(await runAudits(deps, name)).toHaveLength(1);
    expect((await row(id)).nextRunAt!.getTime()).toBe(nextRunAt!.getTime() + 15 * MINUTE);

    // The claim itself: of ten replicas claiming the same due run at once, exactly one wins.
    const due = (await row(id)).nextRunAt!;
    deps.clock.set(new Date(due.getTime() + 1_000));
    const current = await row(id);
    const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => claimRun(deps, current, `replica-${i}`, due)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    // Nor can a run on request claim it while that run is in progress.
    expect(await claimRun(deps, current, 'replica-x')).toBeUndefined();
  });

  it('fails a run whose replica died in its first step, without making it again, and moves on', async () => {
    const { deps, name, schedule, row, peer } = await setUp();
    await run(deps, name);
    const { id, nextRunAt } = await schedule({ action: 'command', command: 'say lost', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC' });
    deps.clock.set(new Date(nextRunAt!.getTime() + 1_000));
    // Replica A claims the run and dies before its command is sent.
    const claimed = await claimRun(deps, await row(id), 'replica-a', nextRunAt!);
    expect(claimed?.runState).toBe('claimed');
    deps.clock.advance(CLAIMED_STALE_MS - 1_000);
    await tickSchedules(deps, 'replica-b');
    expect((await row(id)).runState).toBe('claimed'); // maybe still running on A
    deps.clock.advance(2_000);
    await tickSchedules(deps, 'replica-b');
    expect(await row(id)).toMatchObject({
      runState: null,
      lastResult: 'failed',
      lastDetail: expect.stringContaining('stopped in the middle'),
      nextRunAt: new Date('2026-06-02T13:00:00.000Z'),
    });
    expect(peer.game.received.filter((c) => c === 'say lost')).toEqual([]);
  });

  it('raises schedule.failed for the webhooks and counts each ended run by its outcome', async () => {
    const { deps, name, schedule, row } = await setUp();
    const now = deps.clock.now();
    await addWebhookEndpoint(deps.database.db, now, { events: ['schedule.failed'] });
    const runs = async (outcome: string) => (await deps.fleetMetrics.scheduleRuns.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
    const before = { failed: await runs('failed'), skipped: await runs('skipped') };
    await run(deps, name);
    const lost = await schedule({ action: 'command', command: 'say lost', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC' });
    deps.clock.set(new Date(lost.nextRunAt!.getTime() + 1_000));
    await claimRun(deps, await row(lost.id), 'replica-a', lost.nextRunAt!);
    deps.clock.advance(CLAIMED_STALE_MS + 1_000);
    await tickSchedules(deps, 'replica-b');
    expect((await row(lost.id)).lastResult).toBe('failed');
    const queued = await deps.database.db.select().from(webhookDeliveries);
    expect(queued.map((d) => d.eventType)).toEqual(['schedule.failed']);
    expect(queued[0]!.payload).toMatchObject({ subject: { kind: 'schedule', id: String(lost.id) }, data: { server: name, action: 'command' } });
    expect(await runs('failed')).toBe(before.failed + 1);
    expect(await runs('skipped')).toBe(before.skipped);
  });

  it('carries on a backup whose replica died while the server was stopping: one backup, the server started again', async () => {
    const { deps, name, schedule, row, worlds } = await setUp();
    await run(deps, name);
    const { id, nextRunAt } = await schedule({ action: 'backup', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC' });
    deps.clock.set(new Date(nextRunAt!.getTime() + 1_000));
    // Replica A claims the run, asks for the stop, and dies.
    const claimed = (await claimRun(deps, await row(id), 'replica-a', nextRunAt!))!;
    await beginRun(deps, claimed);
    expect(await row(id)).toMatchObject({ runState: 'stopping', runResume: true });
    expect(deps.cluster.server(name)!.status.phase).toBe('Stopping');

    const b = replicaOf(deps);
    await settle(b, deps.cluster.options.stopDelayMs);
    await tickSchedules(b, 'replica-b');
    expect((await row(id)).runState).toBe('backing_up');
    await worlds.jobs.idle();
    await Promise.all([tickSchedules(b, 'replica-b'), tickSchedules(replicaOf(deps), 'replica-c')]);
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'ok' });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Running');
    const backups = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name));
    expect(backups).toEqual([expect.objectContaining({ reason: 'scheduled', status: 'present', retention: 'monthly' })]);
    expect(await runAudits(deps, name)).toHaveLength(1);
  });

  it('records a run found later than the grace as missed and moves on; within the grace it runs late', async () => {
    const { deps, name, schedule, row, peer } = await setUp();
    await run(deps, name);
    const { id, nextRunAt } = await schedule({ action: 'command', command: 'say late', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC' });
    // Every replica was down from before 13:00 until 13:11 (the grace is 10 minutes).
    deps.clock.set(new Date(nextRunAt!.getTime() + 11 * MINUTE));
    await tickSchedules(deps, 'replica-a');
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'missed', lastRunAt: nextRunAt, nextRunAt: new Date('2026-06-02T13:00:00.000Z') });
    expect(peer.game.received).not.toContain('say late');

    deps.clock.set(new Date('2026-06-02T13:09:00.000Z'));
    await tickSchedules(deps, 'replica-a');
    expect(await row(id)).toMatchObject({ lastResult: 'ok', nextRunAt: new Date('2026-06-03T13:00:00.000Z') });
    expect(peer.game.received.filter((c) => c === 'say late')).toHaveLength(1);
  });

  it('warns the players over RCON once before a restart, then restarts the server', async () => {
    const { deps, name, schedule, row, said } = await setUp();
    await run(deps, name);
    const { id, nextRunAt } = await schedule({ action: 'restart', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC', warn_minutes: 5 });
    const due = nextRunAt!.getTime();
    deps.clock.set(new Date(due - 6 * MINUTE));
    await tickSchedules(deps, 'replica-a');
    expect(said()).toEqual([]);
    deps.clock.set(new Date(due - 5 * MINUTE + 5_000));
    await Promise.all([tickSchedules(deps, 'replica-a'), tickSchedules(deps, 'replica-b')]);
    deps.clock.set(new Date(due - 2 * MINUTE));
    await tickSchedules(deps, 'replica-b');
    expect(said()).toEqual(['say [Felis] Server restarts in 5 min']);

    deps.clock.set(new Date(due + 3_000));
    await tickSchedules(deps, 'replica-a');
    expect(await row(id)).toMatchObject({ runState: 'restarting' });
    expect(deps.cluster.server(name)!.status.phase).toBe('Stopping');
    await settle(deps, deps.cluster.options.stopDelayMs);
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Running');
    await tickSchedules(deps, 'replica-a');
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'ok' });
    const [restart] = await deps.database.db.select().from(serverRestarts).where(eq(serverRestarts.serverName, name));
    expect(restart).toMatchObject({ state: 'done', requestedBy: 'scheduler' });
    // The next day's run warns again.
    deps.clock.set(new Date(due + 24 * 60 * MINUTE - 5 * MINUTE));
    deps.cluster.tick();
    await tickSchedules(deps, 'replica-a');
    expect(said()).toHaveLength(2);
  });

  it('waits for a world held by a restore and records why no backup was taken', async () => {
    const { deps, name, schedule, row } = await setUp();
    const { id, nextRunAt } = await schedule({ action: 'backup', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC' });
    const lock = { key: LEASE_KEYS.world(name), holder: crypto.randomUUID(), purpose: 'restore', ttlMs: 60 * MINUTE };
    deps.clock.set(new Date(nextRunAt!.getTime() + 1_000));
    expect(await takeLease(deps.database.db, deps.clock.now(), lock)).toBe(true);
    await tickSchedules(deps, 'replica-a');
    expect(await row(id)).toMatchObject({ runState: 'stopping', runResume: false });
    deps.clock.advance(STEP_WAIT_MS - MINUTE);
    await tickSchedules(deps, 'replica-a');
    expect((await row(id)).runState).toBe('stopping');
    deps.clock.advance(2 * MINUTE);
    await tickSchedules(deps, 'replica-a');
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'failed', lastDetail: expect.stringContaining('held the world') });
    expect(await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name))).toEqual([]);

    // The next day the restore lets go while the run waits: the backup is taken then.
    const next = (await row(id)).nextRunAt!;
    deps.clock.set(new Date(next.getTime() + 1_000));
    expect(await takeLease(deps.database.db, deps.clock.now(), lock)).toBe(true);
    await tickSchedules(deps, 'replica-a');
    deps.clock.advance(MINUTE);
    await releaseLease(deps.database.db, lock.key, lock.holder);
    await tickSchedules(deps, 'replica-a');
    await deps.worlds.jobs.idle();
    await tickSchedules(deps, 'replica-a');
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'ok' });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
  });

  it('records why a start or restart did not run while the world is held, and stops firing for a new owner', async () => {
    const { deps, name, schedule, row } = await setUp();
    const start = await schedule({ action: 'start', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC' });
    await takeLease(deps.database.db, deps.clock.now(), { key: LEASE_KEYS.world(name), holder: crypto.randomUUID(), purpose: 'file_write', ttlMs: 120 * MINUTE });
    deps.clock.set(new Date(start.nextRunAt!.getTime() + 1_000));
    await tickSchedules(deps, 'replica-a');
    expect(await row(start.id)).toMatchObject({ lastResult: 'skipped', lastDetail: expect.stringContaining('held by a restore, backup or file write') });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');

    const heir = await worldMember(deps);
    const { serverClaims } = await import('../../db/schema/servers.js');
    await deps.database.db.update(serverClaims).set({ userId: heir.id }).where(eq(serverClaims.serverName, name));
    deps.clock.set(new Date(start.nextRunAt!.getTime() + 24 * 60 * MINUTE + 1_000));
    await tickSchedules(deps, 'replica-a');
    expect(await row(start.id)).toMatchObject({ enabled: false, nextRunAt: null, lastDetail: expect.stringContaining('new owner') });
  });

  it('starts and stops within the wake rules, and says why a run was skipped', async () => {
    const { deps, name, schedule, row, peer } = await setUp();
    const command = await schedule({ action: 'command', command: 'say hi', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC' });
    const start = await schedule({ action: 'start', minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC' });
    const stop = await schedule({ action: 'stop', minute_of_day: 14 * 60, weekdays: 0x7f, timezone: 'UTC' });
    deps.clock.set('2026-06-01T13:00:05.000Z');
    await tickSchedules(deps, 'replica-a');
    // The command came first (ids in order) while the server was still stopped.
    expect(await row(command.id)).toMatchObject({ lastResult: 'skipped', lastDetail: 'the server was not running' });
    expect(await row(start.id)).toMatchObject({ lastResult: 'ok' });
    expect(peer.game.received).not.toContain('say hi');
    deps.clock.advance(deps.cluster.options.startDelayMs);
    deps.cluster.tick();
    expect(deps.cluster.server(name)!.status.phase).toBe('Running');
    deps.clock.set('2026-06-01T14:00:05.000Z');
    await tickSchedules(deps, 'replica-a');
    expect(await row(stop.id)).toMatchObject({ lastResult: 'ok' });
    expect(deps.cluster.server(name)!.status.phase).toBe('Stopping');
    // The next day the node is full (its one slot held by another server): the start is skipped,
    // and says so. (A cap of 0 is no cap, as the original's wake policy.)
    await (await import('../servers/wakes/settings.js')).writeSetting(deps.database.db, 'node_server_cap', 1, deps.clock.now());
    deps.clock.set('2026-06-02T12:00:00.000Z');
    deps.cluster.tick();
    await run(deps, addServer(deps).spec.name);
    await syncedCache(deps);
    deps.clock.set('2026-06-02T13:00:05.000Z');
    deps.cluster.tick();
    await tickSchedules(deps, 'replica-a');
    expect(await row(start.id)).toMatchObject({ lastResult: 'skipped', lastDetail: expect.stringContaining('the server was not started') });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
  });

  it('computes the same next run the runner stores (the row is the truth)', async () => {
    const { deps, schedule, row } = await setUp();
    const { id } = await schedule({ action: 'stop', every_minutes: 120, weekdays: 0b1000001, timezone: 'America/Sao_Paulo' });
    const stored: ScheduleRow = await row(id);
    expect(stored.nextRunAt).toEqual(nextRun(stored, deps.clock.now()));
  });
});
