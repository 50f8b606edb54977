import { leases } from '../../../db/schema/coordination.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { addServer } from '../../../../test/helpers/servers.js';
import { expectTierMatrix } from '../../../../test/helpers/tier-matrix.js';
import { LocalBackupStore } from '../../../adapters/backup-store/local.js';
import { auditLog } from '../../../db/schema/audit.js';
import { serverClaims } from '../../../db/schema/servers.js';
import { worldBackups } from '../../../db/schema/worlds.js';
import { reverifyBackups, sweepExpiredBackups } from './records.js';
import { failOrphanedJobs, recordJob } from '../jobs/records.js';
import { LOCK_LEASE_MS, sweepLapsedLocks } from '../jobs/lock.js';
import { KUBERNETES_NEEDS_S3 } from '../volumes/index.js';
import type { BackupView } from './schema.js';
import { claimFor, testWorlds, useTempDir, worldMember } from '../../../../test/helpers/worlds.js';

describe('backup, restore and job routes', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  function setUp() {
    const root = tempDir();
    const store = new LocalBackupStore(join(root, 'backups'));
    const worlds = testWorlds(root, store);
    const deps = createTestDeps(database(), { overrides: { worlds } });
    return { deps, worlds, store, ...createTestApps(deps) };
  }


  async function ownedWorld(deps: TestDeps, ownerId: string, content = 'motd=first\n') {
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, ownerId);
    const folder = await deps.worlds.folders!.folder(name);
    writeFileSync(join(folder, 'server.properties'), content);
    return { name, folder };
  }

  const post = (app: { request: (p: string, i: RequestInit) => Response | Promise<Response> }, path: string, headers: Record<string, string>, body?: unknown) =>
    app.request(path, body === undefined ? { method: 'POST', headers } : jsonRequest('POST', body, headers));

  it('backs up a stopped world for its owner, lists it and shows the job', async () => {
    const { deps, external } = setUp();
    const owner = await worldMember(deps);
    const { name } = await ownedWorld(deps, owner.id);

    const res = await post(external, `/api/v1/servers/${name}/backup`, owner.headers);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ name, status: 'backing_up' });
    await deps.worlds.jobs.idle();

    const listed = await external.request('/api/v1/backups', { headers: owner.headers });
    const page = (await listed.json()) as { backups: BackupView[]; total: number };
    expect(page.total).toBe(1);
    expect(page.backups[0]).toEqual({
      id: expect.any(String),
      server_name: name,
      size_bytes: expect.any(Number),
      reason: 'manual',
      status: 'present',
      created_at: deps.clock.now().toISOString(),
      expires_at: new Date(deps.clock.now().getTime() + 30 * 86_400_000).toISOString(),
      former_owner: owner.id,
      verified_at: deps.clock.now().toISOString(),
    });
    expect(JSON.stringify(page)).not.toContain('worlds/');

    const jobs = await external.request(`/api/v1/servers/${name}/jobs`, { headers: owner.headers });
    expect(await jobs.json()).toEqual({
      server: name,
      jobs: [expect.objectContaining({ kind: 'backup', state: 'succeeded', backup_id: page.backups[0]!.id })],
    });
  });

  it('refuses a running server (409 not_stopped), a stranger (403) and an unknown server (404)', async () => {
    const { deps, external } = setUp();
    const owner = await worldMember(deps);
    const stranger = await worldMember(deps);
    const { name } = await ownedWorld(deps, owner.id);
    expect((await post(external, `/api/v1/servers/${name}/backup`, stranger.headers)).status).toBe(403);
    expect((await post(external, `/api/v1/servers/nosuchserver/backup`, owner.headers)).status).toBe(404);
    await deps.cluster.setDesiredState(name, 'Running');
    const running = await post(external, `/api/v1/servers/${name}/backup`, owner.headers);
    expect(running.status).toBe(409);
    expect((await errorOf(running)).code).toBe('not_stopped');
    const restoring = await post(external, `/api/v1/servers/${name}/restore-backup`, owner.headers, {});
    expect(restoring.status).toBe(404);
    expect((await errorOf(restoring)).code).toBe('no_backup');
  });

  it('holds the world: a second job and a wake get 409 maintenance_in_progress until the first ends', async () => {
    const { deps, external } = setUp();
    const owner = await worldMember(deps);
    const { name } = await ownedWorld(deps, owner.id);
    await deps.database.db.insert(leases).values({
      key: `world:${name}`,
      holder: crypto.randomUUID(),
      purpose: 'file_write',
      acquiredAt: deps.clock.now(),
      leaseUntil: new Date(deps.clock.now().getTime() + LOCK_LEASE_MS),
    });
    const held = await post(external, `/api/v1/servers/${name}/backup`, owner.headers);
    expect(held.status).toBe(409);
    expect((await errorOf(held)).code).toBe('maintenance_in_progress');
    const wake = await post(external, `/api/v1/servers/${name}/wake`, owner.headers);
    expect(wake.status).toBe(409);
    expect((await errorOf(wake)).code).toBe('maintenance_in_progress');

    // Its holder died: once the lease lapses, the next job takes the lock over, on any replica.
    deps.clock.advance(LOCK_LEASE_MS + 1);
    expect((await post(external, `/api/v1/servers/${name}/backup`, owner.headers)).status).toBe(202);
    await deps.worlds.jobs.idle();
    expect(await deps.database.db.select().from(leases).where(eq(leases.key, `world:${name}`))).toEqual([]);
  });

  it('sweeps lapsed locks and fails the jobs whose replica died', async () => {
    const { deps } = setUp();
    const { name } = addServer(deps).spec;
    const holder = crypto.randomUUID();
    await deps.database.db.insert(leases).values({
      key: `world:${name}`,
      holder,
      purpose: 'backup',
      acquiredAt: deps.clock.now(),
      leaseUntil: new Date(deps.clock.now().getTime() + LOCK_LEASE_MS),
    });
    await recordJob(deps, { id: holder, serverName: name, kind: 'backup', lockHolder: holder });
    expect(await failOrphanedJobs(deps.database.db, deps.clock.now())).toHaveLength(0);
    deps.clock.advance(LOCK_LEASE_MS + 1);
    expect(await sweepLapsedLocks(deps.database.db, deps.clock.now())).toBe(1);
    expect(await failOrphanedJobs(deps.database.db, deps.clock.now())).toHaveLength(1);
  });

  it('restores the chosen backup after a pre_restore snapshot, giving back the same bytes', async () => {
    const { deps, external } = setUp();
    const owner = await worldMember(deps);
    const { name, folder } = await ownedWorld(deps, owner.id, 'motd=the good days\n');
    await post(external, `/api/v1/servers/${name}/backup`, owner.headers);
    await deps.worlds.jobs.idle();
    const [good] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name));
    writeFileSync(join(folder, 'server.properties'), 'motd=griefed\n');
    deps.clock.advance(1000);

    const res = await post(external, `/api/v1/servers/${name}/restore-backup`, owner.headers, { backup_id: good!.id });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ name, status: 'restoring', backup_id: good!.id, safety_snapshot: true });
    await deps.worlds.jobs.idle();
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=the good days\n');

    const page = (await (await external.request(`/api/v1/backups?server=${name}`, { headers: owner.headers })).json()) as {
      backups: BackupView[];
    };
    expect(page.backups.map((b) => b.reason)).toEqual(['pre_restore', 'manual']);
    const snapshot = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.id, page.backups[0]!.id));
    expect(snapshot[0]!.expiresAt.getTime() - snapshot[0]!.createdAt.getTime()).toBe(7 * 86_400_000);

    // The snapshot holds the griefed world, so that restore can itself be undone.
    await post(external, `/api/v1/servers/${name}/restore-backup`, owner.headers, { backup_id: page.backups[0]!.id, safety_snapshot: false });
    await deps.worlds.jobs.idle();
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=griefed\n');
    const jobs = (await (await external.request(`/api/v1/servers/${name}/jobs`, { headers: owner.headers })).json()) as {
      jobs: { kind: string; state: string }[];
    };
    expect(jobs.jobs.map((j) => `${j.kind}:${j.state}`).sort()).toEqual(
      ['backup:succeeded', 'backup:succeeded', 'restore:succeeded', 'restore:succeeded'].sort(),
    );
  });

  it('never restores a corrupt backup, and never another owner’s world', async () => {
    const { deps, external, store } = setUp();
    const owner = await worldMember(deps);
    const other = await worldMember(deps);
    const admin = await worldMember(deps, 'admin');
    const { name, folder } = await ownedWorld(deps, owner.id);
    await post(external, `/api/v1/servers/${name}/backup`, owner.headers);
    await deps.worlds.jobs.idle();
    const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name));

    // The server changes hands: neither the new owner nor staff may restore the old owner's world.
    await deps.database.db.update(serverClaims).set({ userId: other.id }).where(eq(serverClaims.serverName, name));
    for (const who of [other, admin]) {
      const res = await post(external, `/api/v1/servers/${name}/restore-backup`, who.headers, { backup_id: backup!.id });
      expect(res.status).toBe(403);
    }
    await deps.database.db.update(serverClaims).set({ userId: owner.id }).where(eq(serverClaims.serverName, name));

    const path = join(store.root, backup!.storageKey);
    const bytes = readFileSync(path);
    bytes[40] = bytes[40]! ^ 0x10;
    writeFileSync(path, bytes);
    deps.clock.advance(2 * 86_400_000);
    expect(await reverifyBackups(deps, 86_400_000, 1000)).toBeGreaterThanOrEqual(1);
    const listed = (await (await external.request('/api/v1/backups', { headers: owner.headers })).json()) as { backups: BackupView[] };
    expect(listed.backups[0]!.corrupt).toBe(true);

    const refused = await post(external, `/api/v1/servers/${name}/restore-backup`, owner.headers, { backup_id: backup!.id });
    expect(refused.status).toBe(409);
    expect((await errorOf(refused)).code).toBe('backup_corrupt');
    const latest = await post(external, `/api/v1/servers/${name}/restore-backup`, owner.headers, {});
    expect((await errorOf(latest)).code).toBe('no_backup');
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=first\n');
  });

  it('marks a backup corrupt the moment its archive fails to unpack at restore, and takes no second snapshot (issue 30, item 5)', async () => {
    const { deps, external, store } = setUp();
    const owner = await worldMember(deps);
    const { name, folder } = await ownedWorld(deps, owner.id);
    await post(external, `/api/v1/servers/${name}/backup`, owner.headers);
    await deps.worlds.jobs.idle();
    const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name));
    writeFileSync(join(folder, 'server.properties'), 'motd=since\n');

    // Damaged in the store after its last read-back: inflating it fails (Z_DATA_ERROR) before the hash can be compared.
    const path = join(store.root, backup!.storageKey);
    const bytes = readFileSync(path);
    for (let i = 20; i < bytes.length - 8; i += 7) bytes[i] = bytes[i]! ^ 0xa5;
    writeFileSync(path, bytes);

    const first = await post(external, `/api/v1/servers/${name}/restore-backup`, owner.headers, { backup_id: backup!.id });
    expect(first.status).toBe(202);
    await deps.worlds.jobs.idle();
    const [after] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.id, backup!.id));
    expect(after!.corrupt).toBe(true);
    const jobs = (await (await external.request(`/api/v1/servers/${name}/jobs`, { headers: owner.headers })).json()) as {
      jobs: { kind: string; state: string; message: string | null }[];
    };
    expect(jobs.jobs.find((j) => j.kind === 'restore')).toMatchObject({ state: 'failed', message: expect.stringMatching(/^backup_corrupt: /) });
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=since\n');

    const again = await post(external, `/api/v1/servers/${name}/restore-backup`, owner.headers, { backup_id: backup!.id });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe('backup_corrupt');
    await deps.worlds.jobs.idle();
    const snapshots = await deps.database.db.select().from(worldBackups).where(and(eq(worldBackups.serverName, name), eq(worldBackups.reason, 'pre_restore')));
    expect(snapshots).toHaveLength(1);
  });

  it('pages with a total, scopes users to their former worlds, deletes and sweeps expired backups', async () => {
    const { deps, external } = setUp();
    const owner = await worldMember(deps);
    const stranger = await worldMember(deps);
    const admin = await worldMember(deps, 'admin');
    const { name } = await ownedWorld(deps, owner.id);
    for (let i = 0; i < 3; i++) {
      expect((await post(external, `/api/v1/servers/${name}/backup`, owner.headers)).status).toBe(202);
      await deps.worlds.jobs.idle();
      deps.clock.advance(60_000);
    }
    const page = async (headers: Record<string, string>, query = '') =>
      (await (await external.request(`/api/v1/backups${query}`, { headers })).json()) as { backups: BackupView[]; total: number };
    const first = await page(owner.headers, `?server=${name}&limit=2`);
    expect(first.total).toBe(3);
    expect(first.backups).toHaveLength(2);
    const second = await page(owner.headers, `?server=${name}&limit=2&offset=2`);
    expect(second.backups).toHaveLength(1);
    expect((await page(stranger.headers)).total).toBe(0);
    expect((await page(admin.headers, `?server=${name}`)).total).toBe(3);
    expect((await external.request('/api/v1/backups?limit=0', { headers: owner.headers })).status).toBe(400);
    expect((await external.request('/api/v1/backups?color=red', { headers: owner.headers })).status).toBe(400);

    const id = second.backups[0]!.id;
    const foreign = await external.request(`/api/v1/backups/${id}`, { method: 'DELETE', headers: stranger.headers });
    expect((await errorOf(foreign)).code).toBe('no_backup');
    const deleted = await external.request(`/api/v1/backups/${id}`, { method: 'DELETE', headers: owner.headers });
    expect(await deleted.json()).toEqual({ id, status: 'expired' });
    expect((await external.request(`/api/v1/backups/${id}`, { method: 'DELETE', headers: owner.headers })).status).toBe(404);
    expect((await external.request(`/api/v1/backups/not-a-uuid`, { method: 'DELETE', headers: owner.headers })).status).toBe(400);

    deps.clock.advance(31 * 86_400_000);
    expect(await sweepExpiredBackups(deps)).toBeGreaterThanOrEqual(2);
    const left = await deps.database.db.select({ status: worldBackups.status }).from(worldBackups).where(eq(worldBackups.serverName, name));
    expect(left.map((r) => r.status)).toEqual(['expired', 'expired', 'expired']);
  });

  it('takes the break-glass backup for ops, audited to the operator', async () => {
    const { deps, internal } = setUp();
    const { name } = addServer(deps).spec;
    const res = await internal.request(`/api/v1/internal/servers/${name}/backup`, jsonRequest('POST', { os_user: 'alice' }, bearer('ops')));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ name, status: 'backing_up' });
    await deps.worlds.jobs.idle();
    const bare = await internal.request(`/api/v1/internal/servers/${name}/backup`, { method: 'POST', headers: bearer('ops') });
    expect(bare.status).toBe(202);
    await deps.worlds.jobs.idle();
    const audit = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.action, 'break_glass_backup'), eq(auditLog.target, name)));
    expect(audit.map((a) => a.actor).sort()).toEqual(['alice', 'break-glass']);

    const bad = await internal.request(`/api/v1/internal/servers/${name}/backup`, jsonRequest('POST', { os_user: 'rm -rf /' }, bearer('ops')));
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).code).toBe('bad_name');
    // A malformed server name is the original's 400 bad_name too.
    for (const badName of ['Bad_Name', '-x', 'a'.repeat(41)]) {
      const malformed = await internal.request(`/api/v1/internal/servers/${badName}/backup`, { method: 'POST', headers: bearer('ops') });
      expect(malformed.status, badName).toBe(400);
      expect((await errorOf(malformed)).code).toBe('bad_name');
    }
    const unknownField = await internal.request(`/api/v1/internal/servers/${name}/backup`, jsonRequest('POST', { os_user: 'a', x: 1 }, bearer('ops')));
    expect((await errorOf(unknownField)).code).toBe('bad_request');
    await deps.cluster.setDesiredState(name, 'Running');
    const running = await internal.request(`/api/v1/internal/servers/${name}/backup`, { method: 'POST', headers: bearer('ops') });
    expect((await errorOf(running)).code).toBe('not_stopped');
  });

  it('answers 503 when the backup store cannot be reached', async () => {
    const { deps, external } = setUp();
    const owner = await worldMember(deps);
    const { name } = await ownedWorld(deps, owner.id);
    deps.worlds.store.ping = async () => {
      throw new Error('down');
    };
    const res = await post(external, `/api/v1/servers/${name}/backup`, owner.headers);
    expect(res.status).toBe(503);
  });

  it('answers 503 naming the S3 settings on Kubernetes without an S3 store', async () => {
    const { deps, external } = setUp();
    const owner = await worldMember(deps);
    const { name } = await ownedWorld(deps, owner.id);
    deps.worlds.folders = undefined;
    deps.worlds.unavailable = KUBERNETES_NEEDS_S3;
    for (const path of [`/api/v1/servers/${name}/backup`, `/api/v1/servers/${name}/restore-backup`, `/api/v1/servers/${name}/world/export`]) {
      const res = await post(external, path, owner.headers, {});
      expect(res.status).toBe(503);
      const error = await errorOf(res);
      expect(error.code).toBe('unavailable');
      expect(error.message).toContain('BACKUP_S3_BUCKET');
    }
  });

  it('enforces the tiers of every route', async () => {
    const { external, internal } = setUp();
    const id = crypto.randomUUID();
    await expectTierMatrix(external, [
      { method: 'POST', path: '/api/v1/servers/alpha/backup', access: { tier: 'app' } },
      { method: 'POST', path: '/api/v1/servers/alpha/restore-backup', access: { tier: 'app' } },
      { method: 'GET', path: '/api/v1/backups', access: { tier: 'app' } },
      { method: 'DELETE', path: `/api/v1/backups/${id}`, access: { tier: 'app' } },
      { method: 'GET', path: '/api/v1/servers/alpha/jobs', access: { tier: 'app' } },
    ]);
    await expectTierMatrix(internal, [{ method: 'POST', path: '/api/v1/internal/servers/alpha/backup', access: { tier: 'service', callers: ['ops'] } }]);
  });
});
