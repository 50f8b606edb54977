import { eq, sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../../../test/global-setup.js';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';
import { claimFor } from '../../../test/helpers/worlds.js';
import { openPostgres, type DatabaseHandle } from '../../db/client.js';
import { auditLog } from '../../db/schema/audit.js';
import { userQuotas } from '../../db/schema/accounts.js';
import { serverClaims } from '../../db/schema/servers.js';
import { writeSetting } from './wakes/settings.js';

/** A second, independent connection pool to the same PostgreSQL database (a second replica); undefined on PGlite. */
async function secondHandle(handle: DatabaseHandle): Promise<DatabaseHandle | undefined> {
  const pg = inject('postgresTemplate');
  if (handle.kind !== 'postgres' || !pg) return undefined;
  const rows = (await handle.db.execute(sql`select current_database() as name`)) as unknown as Array<{ name: string }>;
  return openPostgres(withDatabase(pg.url, rows[0]!.name));
}

const wake = (deps: TestDeps, name: string, mcUuid: string) =>
  createTestApps(deps).internal.request(`/api/v1/internal/servers/${name}/wake`, jsonRequest('POST', { mc_uuid: mcUuid }, bearer('proxy')));

describe('node capacity and the fair share', () => {
  const database = useTestDatabase();
  const setCap = (deps: TestDeps, cap: number, share = 1) =>
    Promise.all([writeSetting(deps.database.db, 'node_server_cap', cap, deps.clock.now()), writeSetting(deps.database.db, 'wake_share_per_player', share, deps.clock.now())]);

  it('starts exactly one of 50 concurrent wakes against a capacity of one, across two replicas on PostgreSQL', async () => {
    const deps = createTestDeps(database());
    await setCap(deps, 1);
    const other = await secondHandle(deps.database);
    try {
      // The second replica shares the cluster but nothing in memory: its own deps, cache and pool.
      const replica = other ? createTestDeps(other, { overrides: { cluster: deps.cluster, serverCache: deps.serverCache } }) : deps;
      const names = Array.from({ length: 50 }, () => addServer(deps, { autostartPolicy: 'public' }).spec.name);
      const answers = await Promise.all(names.map((name, i) => wake(i % 2 === 0 ? deps : replica, name, randomMcUuid())));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 202)).toHaveLength(1);
      expect(statuses.filter((s) => s === 503)).toHaveLength(49);
      for (const refused of answers.filter((a) => a.status === 503)) expect((await errorOf(refused)).code).toBe('at_capacity');
      expect((await deps.cluster.capacity()).running).toBe(1);
    } finally {
      await other?.close();
    }
  });

  it('lets a player keep one running server they do not own; the next is 403 wake_share_exceeded', async () => {
    const deps = createTestDeps(database());
    await setCap(deps, 20, 1);
    const player = randomMcUuid();
    const [a, b] = [addServer(deps, { autostartPolicy: 'public' }).spec.name, addServer(deps, { autostartPolicy: 'public' }).spec.name];
    expect((await wake(deps, a, player)).status).toBe(202);
    const refused = await wake(deps, b, player);
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe('wake_share_exceeded');
    // Another player is not held by this one's share.
    expect((await wake(deps, b, randomMcUuid())).status).toBe(202);
    // Once the first has stopped (and its start is no longer fresh), the player may start another.
    await deps.cluster.setDesiredState(a, 'Stopped');
    deps.clock.advance(120_000);
    deps.cluster.tick();
    const c = addServer(deps, { autostartPolicy: 'public' }).spec.name;
    expect((await wake(deps, c, player)).status).toBe(202);
    // A server the player owns never counts against the share.
    const user = await createUser(deps);
    const linked = randomMcUuid();
    await linkAccount(deps, { userId: user.id, mcUuid: linked });
    const own = addServer(deps, { autostartPolicy: 'public' }).spec.name;
    await deps.database.db.insert(serverClaims).values({ serverName: own, subdomain: own, userId: user.id, claimedAt: deps.clock.now() });
    expect((await wake(deps, addServer(deps, { autostartPolicy: 'public' }).spec.name, linked)).status).toBe(202);
    expect((await wake(deps, own, linked)).status).toBe(202);
  });

  it('never refuses an owner for slots held by guests of unclaimed servers: the oldest guest start past its first minute is stopped', async () => {
    const deps = createTestDeps(database());
    await setCap(deps, 1, 5);
    const guestServer = addServer(deps, { autostartPolicy: 'public' }).spec.name;
    expect((await wake(deps, guestServer, randomMcUuid())).status).toBe(202);
    const refused = await wake(deps, addServer(deps, { autostartPolicy: 'public' }).spec.name, randomMcUuid());
    expect(refused.status).toBe(503);

    const owner = await createUser(deps);
    const mine = addServer(deps).spec.name;
    await deps.database.db.insert(serverClaims).values({ serverName: mine, subdomain: mine, userId: owner.id, claimedAt: deps.clock.now() });
    const s = await signIn(deps, { userId: owner.id });
    // A guest's start just answered 202 is not taken back by the next wake (issue 43 item 4): within
    // its first minute the owner waits like anyone else.
    const early = await createTestApps(deps).external.request(`/api/v1/servers/${mine}/wake`, { method: 'POST', headers: s.headers });
    expect(early.status).toBe(503);
    expect((await errorOf(early)).code).toBe('at_capacity');
    expect(deps.cluster.server(guestServer)!.spec.desiredState).toBe('Running');
    deps.clock.advance(61_000);
    const res = await createTestApps(deps).external.request(`/api/v1/servers/${mine}/wake`, { method: 'POST', headers: s.headers });
    expect(res.status).toBe(202);
    expect(deps.cluster.server(mine)!.spec.desiredState).toBe('Running');
    expect(deps.cluster.server(guestServer)!.spec.desiredState).toBe('Stopped');
    const [audit] = await deps.database.db.select().from(auditLog).where(eq(auditLog.target, guestServer));
    expect(audit).toMatchObject({ action: 'capacity.preempt', actor: owner.id, detail: { for: mine } });

    // With the node full of owners' own servers, a second owner is refused like anyone else.
    deps.clock.advance(60_000);
    deps.cluster.tick();
    const second = await createUser(deps);
    const theirs = addServer(deps).spec.name;
    await deps.database.db.insert(serverClaims).values({ serverName: theirs, subdomain: theirs, userId: second.id, claimedAt: deps.clock.now() });
    const full = await createTestApps(deps).external.request(`/api/v1/servers/${theirs}/wake`, { method: 'POST', headers: (await signIn(deps, { userId: second.id })).headers });
    expect(full.status).toBe(503);
    expect((await errorOf(full)).code).toBe('at_capacity');
  });

  /**
   * The attack of issue 30 item 3: one linked player claims every unowned server the proxy offers
   * (22) and wakes each; then another player wakes their own server.
   */
  async function attack(deps: TestDeps) {
    const { internal } = createTestApps(deps);
    const attacker = await createUser(deps);
    const attackerUuid = randomMcUuid();
    await linkAccount(deps, { userId: attacker.id, mcUuid: attackerUuid });
    const victim = await createUser(deps);
    const theirs = addServer(deps).spec.name;
    await claimFor(deps, theirs, victim.id);
    const names = Array.from({ length: 22 }, () => addServer(deps).spec.name);
    return {
      attacker,
      retry: (index: number) => wake(deps, names[index]!, attackerUuid),
      run: async () => {
        const claims: number[] = [];
        for (const name of names) {
          claims.push((await internal.request(`/api/v1/internal/servers/${name}/claim`, jsonRequest('POST', { mc_uuid: attackerUuid }, bearer('proxy')))).status);
        }
        const wakes: Array<{ status: number; code?: string }> = [];
        for (const name of names) {
          const res = await wake(deps, name, attackerUuid);
          wakes.push({ status: res.status, ...(res.status >= 400 ? { code: (await errorOf(res)).code } : {}) });
        }
        const res = await createTestApps(deps).external.request(`/api/v1/servers/${theirs}/wake`, { method: 'POST', headers: (await signIn(deps, { userId: victim.id })).headers });
        const other = { status: res.status, ...(res.status >= 400 ? { code: (await errorOf(res)).code } : {}) };
        const count = (list: number[], status: number) => list.filter((s) => s === status).length;
        console.log(
          `attack: ${count(claims, 200)} of 22 claims, ${count(wakes.map((w) => w.status), 202)} wakes started (refusals: ${[...new Set(wakes.filter((w) => w.code).map((w) => w.code))].join(', ') || 'none'}); the other player's own server: ${other.status}${other.code ? ` ${other.code}` : ''}`,
        );
        return { claims, wakes, other };
      },
    };
  }

  it('bounds a new account by the default quota, so one player cannot claim and wake the whole node (item 3)', async () => {
    const deps = createTestDeps(database());
    await setCap(deps, 8);
    const { run } = await attack(deps);
    const { claims, wakes, other } = await run();
    expect(claims.filter((s) => s === 200)).toHaveLength(3);
    expect(claims.filter((s) => s === 403)).toHaveLength(19);
    expect(wakes.filter((w) => w.status === 202)).toHaveLength(2);
    expect(other).toEqual({ status: 202 });
    expect((await deps.cluster.capacity()).running).toBe(3);
  });

  it('keeps the rest of the node for the others when staff lifted the attacker\'s quota: the running share (item 3)', async () => {
    const deps = createTestDeps(database());
    await setCap(deps, 8);
    const { attacker, run, retry } = await attack(deps);
    await deps.database.db.insert(userQuotas).values({ userId: attacker.id, maxServers: null });
    const { claims, wakes, other } = await run();
    expect(claims.filter((s) => s === 200)).toHaveLength(22);
    // 25 % of 8 slots: two of the attacker's servers run, every further wake is refused by the share.
    expect(wakes.filter((w) => w.status === 202)).toHaveLength(2);
    expect(wakes.filter((w) => w.status === 403).map((w) => w.code)).toEqual(Array(20).fill('wake_share_exceeded'));
    expect(other).toEqual({ status: 202 });

    // The share is a setting: at 100 % the attacker's next server starts again.
    await writeSetting(deps.database.db, 'running_share_percent', 100, deps.clock.now());
    expect((await retry(5)).status).toBe(202);
  });
});

