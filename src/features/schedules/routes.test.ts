import { and, eq, notLike } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer } from '../../../test/helpers/servers.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { claimFor, worldMember } from '../../../test/helpers/worlds.js';
import { auditLog } from '../../db/schema/audit.js';
import { serverClaims } from '../../db/schema/servers.js';
import { serverSchedules } from '../../db/schema/schedules.js';
import type { ScheduleView } from './schema.js';

const nightly = { label: 'Nightly restart', action: 'restart', minute_of_day: 240, weekdays: 127, timezone: 'Europe/Berlin', warn_minutes: 5 };

describe('schedule routes', () => {
  const database = useTestDatabase();

  async function setUp() {
    const deps = createTestDeps(database());
    const apps = createTestApps(deps);
    const owner = await worldMember(deps);
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, owner.id);
    const base = `/api/v1/servers/${name}/schedules`;
    const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
      apps.external.request(path, body === undefined ? { method, headers } : jsonRequest(method, body, headers));
    return { deps, ...apps, owner, name, base, call };
  }

  it('creates, lists, changes and deletes a schedule for the owner, with its next run in its time zone, audited', async () => {
    const { deps, owner, name, base, call } = await setUp();
    // 2026-06-01T12:00Z; 04:00 in Berlin (UTC+2 in summer) next falls on 2 June at 02:00Z.
    const created = await call('POST', base, owner.headers, nightly);
    expect(created.status).toBe(201);
    const schedule = (await created.json()) as ScheduleView;
    expect(schedule).toEqual({
      id: expect.any(Number),
      server: name,
      label: 'Nightly restart',
      action: 'restart',
      command: '',
      every_minutes: 0,
      minute_of_day: 240,
      weekdays: 127,
      timezone: 'Europe/Berlin',
      warn_minutes: 5,
      enabled: true,
      next_run_at: '2026-06-02T02:00:00.000Z',
      run_state: '',
      last_run_at: null,
      last_result: '',
      last_detail: '',
      created_by: owner.id,
      created_at: deps.clock.now().toISOString(),
    });

    const listed = await call('GET', base, owner.headers);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual({ server: name, schedules: [schedule], limit: 20 });

    const changed = await call('PUT', `${base}/${schedule.id}`, owner.headers, {
      action: 'command',
      command: '/say hello',
      every_minutes: 30,
      weekdays: 0b0000010, // Mondays; 2026-06-01 is a Monday
      timezone: 'Asia/Shanghai',
      enabled: true,
    });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ action: 'command', command: 'say hello', every_minutes: 30, next_run_at: '2026-06-01T12:30:00.000Z' });

    const disabled = await call('PUT', `${base}/${schedule.id}`, owner.headers, { ...nightly, enabled: false });
    expect(await disabled.json()).toMatchObject({ enabled: false, next_run_at: null });

    const removed = await call('DELETE', `${base}/${schedule.id}`, owner.headers);
    expect(removed.status).toBe(204);
    expect(await (await call('GET', base, owner.headers)).json()).toEqual({ server: name, schedules: [], limit: 20 });
    const audits = await deps.database.db.select({ action: auditLog.action }).from(auditLog).where(and(eq(auditLog.target, name), notLike(auditLog.action, '% /api/%'))); // the feature's rows, not the front door's request rows
    expect(audits.map((a) => a.action).sort()).toEqual(['schedule.create', 'schedule.delete', 'schedule.update', 'schedule.update']);
  });

  it('lets staff manage any server’s schedules and refuses a stranger (403) and unknown servers and schedules (404)', async () => {
    const { deps, base, call, name } = await setUp();
    const staff = await worldMember(deps, 'admin');
    const stranger = await worldMember(deps);
    expect((await call('POST', base, staff.headers, nightly)).status).toBe(201);
    for (const [method, path, body] of [
      ['GET', base, undefined],
      ['POST', base, nightly],
      ['PUT', `${base}/1`, nightly],
      ['DELETE', `${base}/1`, undefined],
      ['POST', `${base}/1/run`, undefined],
    ] as const) {
      const refused = await call(method, path, stranger.headers, body);
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect((await errorOf(refused)).code).toBe('forbidden');
    }
    const unknownServer = await call('GET', '/api/v1/servers/nosuchserver/schedules', staff.headers);
    expect(unknownServer.status).toBe(404);
    for (const [method, body] of [['PUT', nightly], ['DELETE', undefined], ['POST', undefined]] as const) {
      const path = method === 'POST' ? `${base}/999999/run` : `${base}/999999`;
      const missing = await call(method, path, staff.headers, body);
      expect(missing.status, `${method} ${path}`).toBe(404);
      expect((await errorOf(missing)).code).toBe('not_found');
    }
    // A schedule of another server is not found under this one.
    const other = addServer(deps).spec.name;
    const elsewhere = (await (await call('POST', `/api/v1/servers/${other}/schedules`, staff.headers, nightly)).json()) as ScheduleView;
    expect((await call('DELETE', `${base}/${elsewhere.id}`, staff.headers)).status).toBe(404);
    expect(name).not.toBe(other);
  });

  it('refuses bad input with the original’s codes and never a 500', async () => {
    const { owner, base, call } = await setUp();
    const bad: Array<[unknown, string]> = [
      [{ ...nightly, action: 'explode' }, 'bad_schedule'],
      [{ ...nightly, action: undefined }, 'bad_schedule'],
      [{ ...nightly, timezone: 'Mars/Olympus' }, 'bad_schedule'],
      [{ ...nightly, timezone: '' }, 'bad_schedule'],
      [{ ...nightly, timezone: 'Local' }, 'bad_schedule'],
      [{ ...nightly, weekdays: 0 }, 'bad_schedule'],
      [{ ...nightly, weekdays: 128 }, 'bad_schedule'],
      [{ ...nightly, minute_of_day: 1440 }, 'bad_schedule'],
      [{ ...nightly, minute_of_day: -1 }, 'bad_schedule'],
      [{ ...nightly, minute_of_day: 0, every_minutes: 45 }, 'bad_schedule'],
      [{ ...nightly, minute_of_day: 0, every_minutes: 30 }, 'bad_schedule'], // a restart at most hourly
      [{ ...nightly, every_minutes: 60 }, 'bad_schedule'], // a repeating schedule has no minute_of_day
      [{ ...nightly, warn_minutes: 7 }, 'bad_schedule'],
      [{ ...nightly, action: 'start', warn_minutes: 5 }, 'bad_schedule'],
      [{ ...nightly, command: 'say hi' }, 'bad_schedule'],
      [{ ...nightly, label: 'x'.repeat(65) }, 'bad_schedule'],
      [{ ...nightly, label: 'two\nlines' }, 'bad_schedule'],
      [{ ...nightly, action: 'command', warn_minutes: 0, command: '' }, 'bad_request'],
      [{ ...nightly, action: 'command', warn_minutes: 0, command: 'say a\nop me' }, 'bad_request'],
      [{ ...nightly, action: 'command', warn_minutes: 0, command: 'x'.repeat(1025) }, 'bad_request'],
      [{ ...nightly, surprise: true }, 'bad_request'],
      [{ ...nightly, weekdays: '127' }, 'bad_request'],
      [{ ...nightly, minute_of_day: 1.5 }, 'bad_request'],
      [[], 'bad_request'],
    ];
    for (const [body, code] of bad) {
      const res = await call('POST', base, owner.headers, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code, JSON.stringify(body)).toBe(code);
    }
    const notJson = await call('POST', base, { ...owner.headers, 'content-type': 'application/json' }, undefined);
    expect(notJson.status).toBeLessThan(500);
    for (const id of ['0', 'abc', '-1', '1.5', '9999999999999999']) {
      const res = await call('DELETE', `${base}/${id}`, owner.headers);
      expect(res.status, id).toBe(400);
      expect((await errorOf(res)).code, id).toBe('bad_id');
    }
    const badName = await call('GET', '/api/v1/servers/Not_A_Name!/schedules', owner.headers);
    expect(badName.status).toBe(400);
  });

  it('holds at most 20 schedules a server (409 schedule_limit), even when saved at once', async () => {
    const { deps, owner, base, call } = await setUp();
    const results = await Promise.all(Array.from({ length: 24 }, () => call('POST', base, owner.headers, nightly)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(4);
    expect((await errorOf(refused[0]!)).code).toBe('schedule_limit');
    const rows = await deps.database.db.select().from(serverSchedules).where(eq(serverSchedules.serverName, base.split('/')[4]!));
    expect(rows).toHaveLength(20);
  });

  it('refuses a change or delete during a run (409 schedule_running), and a run of a schedule saved for another owner (409 schedule_stale)', async () => {
    const { deps, owner, name, base, call } = await setUp();
    const schedule = (await (await call('POST', base, owner.headers, nightly)).json()) as ScheduleView;
    await deps.database.db.update(serverSchedules).set({ runState: 'restarting', runStepAt: deps.clock.now() }).where(eq(serverSchedules.id, schedule.id));
    for (const [method, path, body] of [
      ['PUT', `${base}/${schedule.id}`, nightly],
      ['DELETE', `${base}/${schedule.id}`, undefined],
      ['POST', `${base}/${schedule.id}/run`, undefined],
    ] as const) {
      const res = await call(method, path, owner.headers, body);
      expect(res.status, `${method} ${path}`).toBe(409);
      expect((await errorOf(res)).code).toBe('schedule_running');
    }
    await deps.database.db.update(serverSchedules).set({ runState: null }).where(eq(serverSchedules.id, schedule.id));

    const heir = await worldMember(deps);
    await deps.database.db.update(serverClaims).set({ userId: heir.id }).where(eq(serverClaims.serverName, name));
    const stale = await call('POST', `${base}/${schedule.id}/run`, heir.headers);
    expect(stale.status).toBe(409);
    expect((await errorOf(stale)).code).toBe('schedule_stale');
    // Saved again by the new owner, it is theirs.
    expect((await call('PUT', `${base}/${schedule.id}`, heir.headers, { ...nightly, action: 'stop' })).status).toBe(200);
    const ran = await call('POST', `${base}/${schedule.id}/run`, heir.headers);
    expect(ran.status).toBe(202);
    expect(await ran.json()).toMatchObject({ id: schedule.id, run_state: '', last_result: 'skipped', last_detail: 'the server was already stopped' });
    const audit = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.target, name), eq(auditLog.action, 'schedule.run_now')));
    expect(audit).toEqual([expect.objectContaining({ actor: heir.id })]);
  });

  it('runs a schedule now and keeps its next run where it was', async () => {
    const { deps, owner, name, base, call } = await setUp();
    await deps.cluster.setDesiredState(name, 'Running');
    deps.clock.advance(deps.cluster.options.startDelayMs);
    deps.cluster.tick();
    const schedule = (await (await call('POST', base, owner.headers, { ...nightly, action: 'stop' })).json()) as ScheduleView;
    const ran = await call('POST', `${base}/${schedule.id}/run`, owner.headers);
    expect(ran.status).toBe(202);
    expect(await ran.json()).toMatchObject({ run_state: '', last_result: 'ok', next_run_at: schedule.next_run_at, last_run_at: deps.clock.now().toISOString() });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
  });

  it('enforces the tiers of every route', async () => {
    const { external } = await setUp();
    await expectTierMatrix(external, [
      { method: 'GET', path: '/api/v1/servers/alpha/schedules', access: { tier: 'app' } },
      { method: 'POST', path: '/api/v1/servers/alpha/schedules', access: { tier: 'app' } },
      { method: 'PUT', path: '/api/v1/servers/alpha/schedules/1', access: { tier: 'app' } },
      { method: 'DELETE', path: '/api/v1/servers/alpha/schedules/1', access: { tier: 'app' } },
      { method: 'POST', path: '/api/v1/servers/alpha/schedules/1/run', access: { tier: 'app' } },
    ]);
  });
});
