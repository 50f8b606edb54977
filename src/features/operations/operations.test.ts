import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';
import { dbBackups, updateReports, updateWindow } from '../../db/schema/operations.js';

const owner = async (deps: TestDeps) => (await signIn(deps, { userId: (await createUser(deps, { role: 'owner' })).id })).headers;
const HOUR = 3600_000;

const report = (checkedAt: string) => ({
  checked_at: checkedAt,
  felis: '4.1.0',
  components: [
    { name: 'felis', state: 'current', current: '4.1.0' },
    { name: 'hono', state: 'available', current: '4.13.19', latest: '4.14.0', selector: '--hono' },
    { name: 'image', state: 'unknown', current: 'itzg/minecraft-server:java21', error: 'registry unreachable' },
    { name: 'kernel', state: 'unreadable', error: 'no permission' },
    { name: 'postgres', state: 'pinned', current: '15', note: 'by policy' },
  ],
});

const backup = (at: string) => ({
  at,
  name: 'felis-db-20260601T120000Z-daily.tar.gz',
  label: 'daily',
  size_bytes: 123456,
  dir: '/var/lib/felis/db-backups',
  felis_version: '4.1.0',
  schema_version: 5,
});

describe('operations: update window, update report, database backup status', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let apps: ReturnType<typeof createTestApps>;
  let ownerId: string;

  beforeAll(async () => {
    deps = createTestDeps(database());
    apps = createTestApps(deps);
    ownerId = (await createUser(deps, { role: 'owner' })).id;
  });

  /** A fresh console session for each call: the tests move the clock past a staff session's idle limit. */
  const asAdmin = async (path: string, init: RequestInit = {}) => {
    const { headers } = await signIn(deps, { userId: ownerId });
    return apps.external.request(path, { ...init, headers: { ...(init.headers as Record<string, string>), ...headers } });
  };
  const putWindow = (body: unknown) => asAdmin('/api/v1/updates/window', jsonRequest('PUT', body));
  const updaterWindow = async () => (await apps.internal.request('/api/v1/internal/updates/window', { headers: bearer('ops') })).json();

  describe('the window', () => {
    it('is unset at first, and then never open', async () => {
      await database().db.delete(updateWindow);
      const res = await asAdmin('/api/v1/updates/window');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ start: null, end: null });
      expect(await updaterWindow()).toEqual({ start: null, end: null, open: false });
    });

    it('is open from its start (inclusive) to its end (exclusive), to the millisecond', async () => {
      const start = '2026-06-02T01:00:00.000Z';
      const end = '2026-06-02T03:00:00.000Z';
      const res = await putWindow({ start, end });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ start, end });
      const at = (iso: string, ms = 0) => deps.clock.set(new Date(new Date(iso).getTime() + ms));

      at(start, -1);
      expect((await updaterWindow()).open).toBe(false);
      at(start);
      expect(await updaterWindow()).toEqual({ start, end, open: true });
      at(end, -1);
      expect((await updaterWindow()).open).toBe(true);
      at(end);
      expect((await updaterWindow()).open).toBe(false);
    });

    it('keeps any offset the admin wrote as the same instant', async () => {
      const res = await putWindow({ start: '2026-06-02T03:00:00+02:00', end: '2026-06-02T05:00:00+02:00' });
      expect(await res.json()).toEqual({ start: '2026-06-02T01:00:00.000Z', end: '2026-06-02T03:00:00.000Z' });
    });

    it('is cleared with both ends null', async () => {
      await putWindow({ start: '2026-06-02T01:00:00Z', end: '2026-06-02T03:00:00Z' });
      deps.clock.set('2026-06-02T02:00:00Z');
      expect((await updaterWindow()).open).toBe(true);
      const res = await putWindow({ start: null, end: null });
      expect(await res.json()).toEqual({ start: null, end: null });
      expect(await updaterWindow()).toEqual({ start: null, end: null, open: false });
    });

    it.each([
      ['only a start', { start: '2026-06-02T01:00:00Z', end: null }],
      ['only an end', { start: null, end: '2026-06-02T01:00:00Z' }],
      ['an end equal to the start', { start: '2026-06-02T01:00:00Z', end: '2026-06-02T01:00:00Z' }],
      ['an end before the start', { start: '2026-06-02T02:00:00Z', end: '2026-06-02T01:00:00Z' }],
      ['a missing key', { start: null }],
      ['a date without an offset', { start: '2026-06-02T01:00:00', end: '2026-06-02T02:00:00' }],
      ['an unknown field', { start: null, end: null, timezone: 'UTC' }],
    ])('refuses %s with 400 and leaves the window as it was', async (_what, body) => {
      await putWindow({ start: '2026-06-02T01:00:00Z', end: '2026-06-02T03:00:00Z' });
      const res = await putWindow(body);
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
      expect(await (await asAdmin('/api/v1/updates/window')).json()).toEqual({
        start: '2026-06-02T01:00:00.000Z',
        end: '2026-06-02T03:00:00.000Z',
      });
    });
  });

  describe('the update report', () => {
    it('is null and stale until the first check is recorded', async () => {
      await database().db.delete(updateReports);
      const res = await asAdmin('/api/v1/updates/report');
      expect(await res.json()).toEqual({ report: null, stale: true, max_age_seconds: 93600 });
    });

    it('serves the newest check recorded by ops, stale only past 26 hours', async () => {
      deps.clock.set('2026-06-03T00:00:00.000Z');
      const recorded = report('2026-06-03T00:00:00.000Z');
      const res = await apps.internal.request('/api/v1/internal/updates/report', jsonRequest('POST', recorded, bearer('ops')));
      expect(res.status).toBe(204);
      await apps.internal.request('/api/v1/internal/updates/report', jsonRequest('POST', report('2026-06-02T00:00:00.000Z'), bearer('ops')));

      const read = async () => (await asAdmin('/api/v1/updates/report')).json();
      expect(await read()).toEqual({ report: recorded, stale: false, max_age_seconds: 93600 });
      deps.clock.set(new Date(Date.parse(recorded.checked_at) + 26 * HOUR - 1000));
      expect((await read()).stale).toBe(false);
      deps.clock.set(new Date(Date.parse(recorded.checked_at) + 26 * HOUR));
      expect((await read()).stale).toBe(false);
      deps.clock.set(new Date(Date.parse(recorded.checked_at) + 26 * HOUR + 1000));
      expect((await read()).stale).toBe(true);
    });

    it.each([
      ['an unknown state', { name: 'x', state: 'outdated' }],
      ['latest on a current component', { name: 'x', state: 'current', current: '1', latest: '2' }],
      ['current on an unreadable component', { name: 'x', state: 'unreadable', current: '1' }],
      ['an unknown field', { name: 'x', state: 'current', extra: 1 }],
    ])('refuses a component with %s', async (_what, component) => {
      const body = { ...report('2026-06-03T00:00:00Z'), components: [component] };
      const res = await apps.internal.request('/api/v1/internal/updates/report', jsonRequest('POST', body, bearer('ops')));
      expect(res.status).toBe(400);
    });
  });

  describe('the database backup status', () => {
    it('is null and stale until the first backup is recorded', async () => {
      await database().db.delete(dbBackups);
      const res = await asAdmin('/api/v1/platform/db-backup');
      expect(await res.json()).toEqual({ last: null, stale: true, max_age_seconds: 93600 });
    });

    it('serves the newest backup recorded, stale only past 26 hours', async () => {
      const last = backup('2026-06-04T00:00:00.000Z');
      const res = await apps.internal.request('/api/v1/internal/db-backups', jsonRequest('POST', last, bearer('ops')));
      expect(res.status).toBe(204);
      const { felis_version: _v, schema_version: _s, ...minimal } = backup('2026-06-03T00:00:00.000Z');
      await apps.internal.request('/api/v1/internal/db-backups', jsonRequest('POST', { ...minimal, label: 'manual' }, bearer('ops')));

      const read = async () => (await asAdmin('/api/v1/platform/db-backup')).json();
      deps.clock.set(new Date(Date.parse(last.at) + 26 * HOUR - 1000));
      expect(await read()).toEqual({ last, stale: false, max_age_seconds: 93600 });
      deps.clock.set(new Date(Date.parse(last.at) + 26 * HOUR + 1000));
      expect((await read()).stale).toBe(true);
    });

    it.each([
      ['an unknown label', { label: 'weekly' }],
      ['a path as its name', { name: '../etc/passwd' }],
      ['a negative size', { size_bytes: -1 }],
    ])('refuses a record with %s', async (_what, change) => {
      const body = { ...backup('2026-06-04T00:00:00Z'), ...change };
      const res = await apps.internal.request('/api/v1/internal/db-backups', jsonRequest('POST', body, bearer('ops')));
      expect(res.status).toBe(400);
    });
  });

  it('answers only the ops caller on the internal face', async () => {
    await expectTierMatrix(apps.internal, [
      { method: 'GET', path: '/api/v1/internal/updates/window', access: { tier: 'service', callers: ['ops'] } },
      { method: 'POST', path: '/api/v1/internal/updates/report', access: { tier: 'service', callers: ['ops'] } },
      { method: 'POST', path: '/api/v1/internal/db-backups', access: { tier: 'service', callers: ['ops'] } },
    ]);
  });
});

describe('operations: tiers and bodies of the console routes', () => {
  const database = useTestDatabase();
  describeTierMatrix(database, 'admin', [
    { method: 'get', path: '/api/v1/updates/window' },
    { method: 'put', path: '/api/v1/updates/window', body: { start: null, end: null } },
    { method: 'get', path: '/api/v1/updates/report' },
    { method: 'get', path: '/api/v1/platform/db-backup' },
  ]);
  describeBadBodies(database, [{ method: 'PUT', path: '/api/v1/updates/window', headers: owner }]);
});
