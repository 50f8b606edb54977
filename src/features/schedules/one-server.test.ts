import { and, asc, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { auditLog } from '../../db/schema/audit.js';
import { serverRestarts } from '../../db/schema/servers.js';
import { worldBackups } from '../../db/schema/worlds.js';
import { createTestApps, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { runServer, settle, useScheduleRig } from '../../../test/helpers/schedules.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { recordProof } from '../accounts/index.js';
import { followRestarts, tickSchedules } from './engine.js';
import { runScheduleNow } from './service.js';
import type { ScheduleInput } from './schema.js';

/**
 * Issue 43, items 2 and 8, and issue 39's "a schedule learns that its restart finished from the
 * restart itself": runs on one server go one at a time in a defined order, each record true; an
 * explicit stop during a run is never undone by it.
 */

const database = useTestDatabase();
const rig = useScheduleRig(database);
const unsubscribes: (() => void)[] = [];
afterEach(() => unsubscribes.splice(0).forEach((u) => u()));

async function setUp() {
  let headers: Record<string, string> = {};
  let tokenHash = '';
  const set = await rig(async (deps) => {
    // A verified address, so the emergency stop asks for (and gets) a fresh proof.
    const owner = await createUser(deps, { role: 'user', email: `${crypto.randomUUID()}@example.test`, emailVerified: true });
    ({ headers, tokenHash } = await signIn(deps, { userId: owner.id, method: 'password' }));
    return owner;
  });
  const { deps, name } = set;
  const { external } = createTestApps(deps);
  unsubscribes.push(followRestarts(deps));
  const post = (path: string, body?: unknown) =>
    external.request(`/api/v1/servers/${name}/${path}`, body === undefined ? { method: 'POST', headers } : jsonRequest('POST', body, headers));
  const emergencyStop = async () => {
    await recordProof(deps.database.db, tokenHash, 'email', deps.clock.now());
    return post('emergency-stop', { confirm: name });
  };
  return { ...set, post, emergencyStop };
}

const run = runServer;

const runAudits = async (deps: TestDeps, name: string) =>
  (
    await deps.database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.target, name), eq(auditLog.action, 'schedule.run')))
      .orderBy(asc(auditLog.at))
  ).map((a) => a.detail as { schedule: number; action: string; result: string; detail?: string });

const daily = (input: ScheduleInput): ScheduleInput => ({ minute_of_day: 13 * 60, weekdays: 0x7f, timezone: 'UTC', ...input });

/**
 * A daily run of a running server (made `runningForMs` after its start), claimed by the first
 * round past its time.
 */
async function runUnderWay(action: 'backup' | 'restart', runningForMs = 0) {
  const set = await setUp();
  await run(set.deps, set.name);
  set.deps.clock.advance(runningForMs);
  const { id, nextRunAt } = await set.schedule(daily({ action }));
  set.deps.clock.set(new Date(nextRunAt!.getTime() + 1_000));
  await tickSchedules(set.deps, 'replica-a');
  return { ...set, id };
}

describe('runs on one server', () => {
  it('an emergency stop during a scheduled backup stands: the run takes its backup and does not start the server again', async () => {
    const { deps, name, id, row, emergencyStop, worlds } = await runUnderWay('backup');
    expect(await row(id)).toMatchObject({ runState: 'stopping', runResume: true });
    deps.clock.advance(deps.cluster.options.stopDelayMs);
    deps.cluster.tick();
    await tickSchedules(deps, 'replica-a');
    expect((await row(id)).runState).toBe('backing_up');

    const res = await emergencyStop();
    expect(res.status).toBe(202);
    await worlds.jobs.idle();
    deps.clock.advance(60_000);
    await tickSchedules(deps, 'replica-a');
    deps.cluster.tick();
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'ok', lastDetail: expect.stringContaining('not started again: an emergency stop') });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
    expect(await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name))).toEqual([
      expect.objectContaining({ reason: 'scheduled', status: 'present' }),
    ]);
  });

  it("the owner's stop while a backup run waits for the server to stop stands too", async () => {
    const { deps, name, id, row, post, worlds } = await runUnderWay('backup');
    expect((await post('stop')).status).toBe(202);
    await settle(deps, deps.cluster.options.stopDelayMs);
    await tickSchedules(deps, 'replica-a');
    await worlds.jobs.idle();
    await tickSchedules(deps, 'replica-a');
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'ok', lastDetail: expect.stringContaining('not started again: an explicit stop') });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
  });

  it('an emergency stop during a scheduled restart ends the run at once, and the restart never starts the server', async () => {
    const { deps, name, id, row, emergencyStop } = await runUnderWay('restart', 60_000);
    expect((await row(id)).runState).toBe('restarting');
    expect((await emergencyStop()).status).toBe(202);
    // No schedule round since: the restart's end told the run.
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'failed', lastDetail: 'ended by an emergency stop' });
    await settle(deps, deps.cluster.options.stopDelayMs);
    await settle(deps, 60_000);
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
  });

  it('a restart run ends when its restart does, without waiting for the next schedule round', async () => {
    const { deps, name, id, row } = await runUnderWay('restart', 60_000);
    expect((await row(id)).runState).toBe('restarting');
    // Only the restart round runs (on any replica); no schedule round comes.
    await settle(deps, deps.cluster.options.stopDelayMs);
    const [restart] = await deps.database.db.select().from(serverRestarts).where(eq(serverRestarts.serverName, name));
    expect(restart!.state).toBe('done');
    expect(await row(id)).toMatchObject({ runState: null, lastResult: 'ok' });
  });

  it('same-minute command, restart, backup, stop and command run one at a time in the order they were made, each record true', async () => {
    const { deps, name, schedule, row, peer, worlds } = await setUp();
    await run(deps, name);
    deps.clock.advance(60_000);
    const made = [];
    for (const input of [
      { action: 'command', command: 'say first' },
      { action: 'restart' },
      { action: 'backup' },
      { action: 'stop' },
      { action: 'command', command: 'say last' },
    ]) {
      made.push(await schedule(daily(input)));
    }
    const ids = made.map((m) => m.id);
    // Every reading of the clock is a millisecond later, so the audit rows' times give their order.
    const read = deps.clock.now.bind(deps.clock);
    deps.clock.now = () => {
      deps.clock.advance(1);
      return read();
    };
    deps.clock.set(new Date(made[0]!.nextRunAt!.getTime() + 1_000));
    await tickSchedules(deps, 'replica-a');
    // The first command ran; the restart is under way; the rest wait their turn.
    expect((await row(ids[0]!)).lastResult).toBe('ok');
    expect((await row(ids[1]!)).runState).toBe('restarting');
    for (const id of ids.slice(2)) expect((await row(id)).runState).toBe('queued');

    // Move the world on, as the rounds would, until nothing is in progress.
    for (let i = 0; i < 20; i++) {
      await settle(deps, 10_000);
      await worlds.jobs.idle();
      await tickSchedules(deps, 'replica-a');
      const rows = await Promise.all(ids.map(row));
      if (rows.every((r) => r.runState === null)) break;
    }
    const audits = await runAudits(deps, name);
    expect(audits.map((a) => [a.schedule, a.result])).toEqual([
      [ids[0], 'ok'],
      [ids[1], 'ok'],
      [ids[2], 'ok'],
      [ids[3], 'ok'],
      [ids[4], 'skipped'],
    ]);
    expect(audits[4]!.detail).toBe('the server was not running');
    expect(peer.game.received.filter((c) => c.startsWith('say first') || c.startsWith('say last'))).toEqual(['say first']);
    expect(await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name))).toHaveLength(1);
    deps.clock.advance(deps.cluster.options.stopDelayMs);
    deps.cluster.tick();
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
    expect(deps.cluster.server(name)!.status.phase).toBe('Stopped');
  });

  it('a run on request behind another run on the server is queued, then made', async () => {
    const { deps, name, schedule, row, caller, worlds } = await setUp();
    await run(deps, name);
    const backup = await schedule(daily({ action: 'backup' }));
    const stop = await schedule(daily({ action: 'stop', minute_of_day: 20 * 60 }));
    deps.clock.set(new Date(backup.nextRunAt!.getTime() + 1_000));
    await tickSchedules(deps, 'replica-a');
    expect((await row(backup.id)).runState).toBe('stopping');
    const now = await runScheduleNow(deps, name, stop.id, caller);
    expect(now.runState).toBe('queued');
    for (let i = 0; i < 10 && (await row(stop.id)).runState !== null; i++) {
      await settle(deps, 10_000);
      await worlds.jobs.idle();
      await tickSchedules(deps, 'replica-a');
    }
    expect(await row(backup.id)).toMatchObject({ lastResult: 'ok' });
    expect(await row(stop.id)).toMatchObject({ lastResult: 'ok', runState: null });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
  });
});
