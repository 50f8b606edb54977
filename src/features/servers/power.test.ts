import { and, eq, notLike } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer } from '../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { claimFor } from '../../../test/helpers/worlds.js';
import { LEASE_KEYS, releaseLease, takeLease } from '../../coordination/index.js';
import { auditLog } from '../../db/schema/audit.js';
import { serverRestarts } from '../../db/schema/servers.js';
import { recordProof } from '../accounts/index.js';
import { advanceRestarts, RESTART_START_WAIT_MS, RESTART_STOP_WAIT_MS, restartsOnStopTask } from './power.js';
import { writeSetting } from './wakes/settings.js';

describe('restart and emergency stop', () => {
  const database = useTestDatabase();

  /** A member whose account has a verified address, so a guarded change needs a fresh proof. */
  async function member(deps: TestDeps, role: 'user' | 'admin' = 'user') {
    const user = await createUser(deps, { role, email: `${crypto.randomUUID()}@example.test`, emailVerified: true });
    const session = await signIn(deps, { userId: user.id, method: 'password' });
    return { ...user, ...session };
  }

  async function setUp() {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const owner = await member(deps);
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, owner.id);
    const post = (path: string, headers: Record<string, string>, body?: unknown) =>
      external.request(`/api/v1/servers/${name}/${path}`, body === undefined ? { method: 'POST', headers } : jsonRequest('POST', body, headers));
    const running = async () => {
      await deps.cluster.setDesiredState(name, 'Running');
      deps.clock.advance(deps.cluster.options.startDelayMs);
      deps.cluster.tick();
    };
    return { deps, external, owner, name, post, running };
  }

  const restartRow = async (deps: TestDeps, name: string) => (await deps.database.db.select().from(serverRestarts).where(eq(serverRestarts.serverName, name)))[0];

  it('restarts a running server for its owner: a graceful stop, then a start, audited', async () => {
    const { deps, owner, name, post, running } = await setUp();
    await running();
    deps.clock.advance(60_000); // past the wake cooldown of that start
    const res = await post('restart', owner.headers);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ name, desiredState: 'Running' });
    expect(deps.cluster.server(name)!.status.phase).toBe('Stopping');

    const again = await post('restart', owner.headers);
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe('conflict');

    await advanceRestarts(deps);
    expect((await restartRow(deps, name))!.state).toBe('stopping');
    deps.clock.advance(deps.cluster.options.stopDelayMs);
    deps.cluster.tick();
    await advanceRestarts(deps);
    expect(await restartRow(deps, name)).toMatchObject({ state: 'done', requestedBy: owner.id, finishedAt: deps.clock.now() });
    expect(deps.cluster.server(name)!.status.phase).toBe('Starting');
    deps.clock.advance(deps.cluster.options.startDelayMs);
    deps.cluster.tick();
    expect(deps.cluster.server(name)!.status.phase).toBe('Running');
    const audit = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.target, name), eq(auditLog.action, 'server.restart')));
    expect(audit).toEqual([expect.objectContaining({ actor: owner.id, requestId: res.headers.get('x-request-id') })]);
  });

  it('refuses a stopped server (409 not_running), a world under maintenance, a stranger (403) and an unknown server (404)', async () => {
    const { deps, external, name, owner, post, running } = await setUp();
    const stranger = await member(deps);
    const stopped = await post('restart', owner.headers);
    expect(stopped.status).toBe(409);
    expect((await errorOf(stopped)).code).toBe('not_running');
    await running();
    const refused = await post('restart', stranger.headers);
    expect(refused.status).toBe(403);
    const lock = { key: LEASE_KEYS.world(name), holder: crypto.randomUUID(), purpose: 'file_write', ttlMs: 600_000 };
    await takeLease(deps.database.db, deps.clock.now(), lock);
    const held = await post('restart', owner.headers);
    expect(held.status).toBe(409);
    expect((await errorOf(held)).code).toBe('maintenance_in_progress');
    await releaseLease(deps.database.db, lock.key, lock.holder);
    const unknown = await external.request('/api/v1/servers/nosuchserver/restart', { method: 'POST', headers: owner.headers });
    expect(unknown.status).toBe(404);
    expect(await restartRow(deps, name)).toBeUndefined();
  });

  it('starts the server again as soon as the cache sees it stopped, without waiting for the restart round', async () => {
    const { deps, owner, name, post, running } = await setUp();
    await running();
    deps.clock.advance(60_000); // past the wake cooldown of that start
    const onStop = restartsOnStopTask(deps);
    onStop.start();
    try {
      expect((await post('restart', owner.headers)).status).toBe(202);
      expect(deps.cluster.server(name)!.status.phase).toBe('Stopping');
      expect((await restartRow(deps, name))!.state).toBe('stopping');
      // The server stops; no round runs (advanceRestarts is never called here).
      deps.clock.advance(deps.cluster.options.stopDelayMs);
      deps.cluster.tick();
      await vi.waitFor(async () => expect(await restartRow(deps, name)).toMatchObject({ state: 'done', finishedAt: deps.clock.now() }));
      expect(deps.cluster.server(name)!.spec.desiredState).toBe('Running');
      expect(deps.cluster.server(name)!.status.phase).toBe('Starting');
    } finally {
      await onStop.stop();
    }
    // Stopped, it follows no more: the next restart waits for the round again.
    deps.clock.advance(deps.cluster.options.startDelayMs);
    deps.cluster.tick();
    deps.clock.advance(60_000);
    expect((await post('restart', owner.headers)).status).toBe(202);
    deps.clock.advance(deps.cluster.options.stopDelayMs);
    deps.cluster.tick();
    const [, second] = await deps.database.db.select().from(serverRestarts).where(eq(serverRestarts.serverName, name)).orderBy(serverRestarts.requestedAt);
    expect(second!.state).toBe('stopping');
    await advanceRestarts(deps);
    expect((await deps.database.db.select().from(serverRestarts).where(eq(serverRestarts.id, second!.id)))[0]!.state).toBe('done');
  });

  it('waits out the node cap before starting again, and gives up on a server that does not stop', async () => {
    const { deps, owner, name, post, running } = await setUp();
    await running();
    deps.clock.advance(60_000);
    expect((await post('restart', owner.headers)).status).toBe(202);
    deps.clock.advance(deps.cluster.options.stopDelayMs);
    deps.cluster.tick();
    // Another server takes the node's only slot meanwhile, and a file write holds the world.
    await writeSetting(deps.database.db, 'node_server_cap', 1, deps.clock.now());
    const other = addServer(deps, { desiredState: 'Running' }).spec.name;
    await advanceRestarts(deps);
    expect(await restartRow(deps, name)).toMatchObject({ state: 'starting' });
    deps.clock.advance(RESTART_START_WAIT_MS - 60_000);
    await advanceRestarts(deps);
    expect((await restartRow(deps, name))!.state).toBe('starting');
    await deps.cluster.setDesiredState(other, 'Stopped');
    deps.clock.advance(deps.cluster.options.stopDelayMs);
    deps.cluster.tick();
    await advanceRestarts(deps);
    expect(await restartRow(deps, name)).toMatchObject({ state: 'done' });
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Running');

    // A server that does not stop: the restart fails after its wait and says so.
    deps.clock.advance(deps.cluster.options.startDelayMs);
    deps.cluster.tick();
    deps.clock.advance(60_000);
    expect((await post('restart', owner.headers)).status).toBe(202);
    deps.clock.advance(RESTART_STOP_WAIT_MS - 1_000);
    await advanceRestarts(deps);
    expect(await deps.database.db.select({ state: serverRestarts.state }).from(serverRestarts).where(eq(serverRestarts.serverName, name))).toContainEqual({ state: 'stopping' });
    deps.clock.advance(2_000);
    await advanceRestarts(deps);
    const rows = await deps.database.db.select().from(serverRestarts).where(eq(serverRestarts.serverName, name)).orderBy(serverRestarts.requestedAt);
    expect(rows.map((r) => [r.state, r.detail])).toEqual([
      ['done', null],
      ['failed', 'the server did not stop within 15 minutes'],
    ]);
  });

  it('ends the pod at once on an emergency stop, for the owner with a fresh proof who typed the name, audited', async () => {
    const { deps, owner, name, post, running } = await setUp();
    await running();
    const unproved = await post('emergency-stop', owner.headers, { confirm: name });
    expect(unproved.status).toBe(403);
    expect((await errorOf(unproved)).code).toBe('reauth_required');
    await recordProof(deps.database.db, owner.tokenHash, 'email', deps.clock.now());
    const wrong = await post('emergency-stop', owner.headers, { confirm: `${name}x` });
    expect(wrong.status).toBe(400);
    expect((await errorOf(wrong)).code).toBe('bad_request');
    expect(deps.cluster.server(name)!.status.phase).toBe('Running');

    const res = await post('emergency-stop', owner.headers, { confirm: name });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ name, desiredState: 'Stopped' });
    // No Stopping phase to wait through: the pod is gone.
    expect(deps.cluster.server(name)!.status.phase).toBe('Stopped');
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
    const audit = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.target, name), notLike(auditLog.action, '% /api/%'))); // the feature's rows, not the front door's request rows
    expect(audit.map((a) => a.action)).toEqual(['emergency_stop']);
  });

  it('ends a restart under way, audits a refusal of the cluster as emergency_stop.failed (503), and lets staff stop any server', async () => {
    const { deps, owner, name, post, running } = await setUp();
    const staff = await member(deps, 'admin');
    const stranger = await member(deps);
    await running();
    deps.clock.advance(60_000);
    expect((await post('restart', owner.headers)).status).toBe(202);
    await recordProof(deps.database.db, staff.tokenHash, 'passkey', deps.clock.now());
    await recordProof(deps.database.db, stranger.tokenHash, 'passkey', deps.clock.now());
    expect((await post('emergency-stop', stranger.headers, { confirm: name })).status).toBe(403);

    deps.cluster.setReachable(false);
    const down = await post('emergency-stop', staff.headers, { confirm: name });
    expect(down.status).toBe(503);
    deps.cluster.setReachable(true);
    const res = await post('emergency-stop', staff.headers, { confirm: name });
    expect(res.status).toBe(202);
    expect(await restartRow(deps, name)).toMatchObject({ state: 'failed', detail: 'ended by an emergency stop' });
    await advanceRestarts(deps);
    expect(deps.cluster.server(name)!.spec.desiredState).toBe('Stopped');
    const audit = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.target, name), eq(auditLog.actor, staff.id), notLike(auditLog.action, '% /api/%')));
    expect(audit.map((a) => a.action)).toEqual(['emergency_stop.failed', 'emergency_stop']);
  });

  it('refuses bad bodies with 400 and never a 500', async () => {
    const { owner, name, post } = await setUp();
    for (const body of [{}, { confirm: 5 }, { confirm: name, surprise: true }, [], 'x']) {
      const res = await post('emergency-stop', owner.headers, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
  });

  it('enforces the tiers of both routes', async () => {
    const { external } = await setUp();
    await expectTierMatrix(external, [
      { method: 'POST', path: '/api/v1/servers/alpha/restart', access: { tier: 'app' } },
      { method: 'POST', path: '/api/v1/servers/alpha/emergency-stop', access: { tier: 'app' } },
    ]);
  });
});
