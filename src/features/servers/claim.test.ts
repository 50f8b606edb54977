import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { userQuotas } from '../../db/schema/accounts.js';
import { serverClaims } from '../../db/schema/servers.js';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, addSystemServer, randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';

async function linkedPlayer(deps: TestDeps, options: { disabled?: boolean } = {}) {
  const user = await createUser(deps, options);
  const mcUuid = randomMcUuid();
  await linkAccount(deps, { userId: user.id, mcUuid });
  return { ...user, mcUuid };
}

describe('claiming a server', () => {
  const database = useTestDatabase();

  it('gives exactly one 200 to 100 concurrent claims of one server by different players', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const { name } = addServer(deps).spec;
    const players = await Promise.all(Array.from({ length: 100 }, () => linkedPlayer(deps)));
    const answers = await Promise.all(
      players.map((p) =>
        internal.request(`/api/v1/internal/servers/${name}/claim`, jsonRequest('POST', { mc_uuid: p.mcUuid }, bearer('proxy'))),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(99);
    const winner = answers.findIndex((r) => r.status === 200);
    expect(await answers[winner]!.json()).toEqual({ name, claimed: true });
    const rows = await deps.database.db.select().from(serverClaims).where(eq(serverClaims.serverName, name));
    expect(rows).toEqual([expect.objectContaining({ userId: players[winner]!.id, cpuMilli: 1000, memoryMb: 2048, storageGb: 5 })]);
  });

  it('never lets one player pass the server quota with concurrent claims of different servers', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const player = await linkedPlayer(deps);
    await deps.database.db.insert(userQuotas).values({ userId: player.id, maxServers: 2 });
    const names = Array.from({ length: 10 }, () => addServer(deps).spec.name);
    const answers = await Promise.all(
      names.map((name) =>
        internal.request(`/api/v1/internal/servers/${name}/claim`, jsonRequest('POST', { mc_uuid: player.mcUuid }, bearer('proxy'))),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 403)).toHaveLength(8);
    expect((await errorOf(answers.find((r) => r.status === 403)!)).code).toBe('quota_exceeded');
  });

  it('checks the cpu, memory and storage quotas against the servers already owned', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const claim = (name: string, mcUuid: string) =>
      internal.request(`/api/v1/internal/servers/${name}/claim`, jsonRequest('POST', { mc_uuid: mcUuid }, bearer('proxy')));
    for (const [limit, expected] of [
      [{ maxCpuMilli: 1500 }, 'CPU'],
      [{ maxMemoryMb: 3000 }, 'memory'],
      [{ maxStorageGb: 8 }, 'storage'],
    ] as const) {
      const player = await linkedPlayer(deps);
      await deps.database.db.insert(userQuotas).values({ userId: player.id, ...limit });
      expect((await claim(addServer(deps).spec.name, player.mcUuid)).status).toBe(200);
      const refused = await claim(addServer(deps).spec.name, player.mcUuid);
      expect(refused.status).toBe(403);
      const error = await errorOf(refused);
      expect(error.code).toBe('quota_exceeded');
      expect(error.message).toContain(expected);
    }
  });

  it('answers 412 not_linked for an unlinked player, 403 for a disabled account, 404 for unknown and system servers', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const { name } = addServer(deps).spec;
    addSystemServer(deps, 'lobby');
    const claim = (server: string, mcUuid: string) =>
      internal.request(`/api/v1/internal/servers/${server}/claim`, jsonRequest('POST', { mc_uuid: mcUuid }, bearer('proxy')));
    const unlinked = await claim(name, randomMcUuid());
    expect(unlinked.status).toBe(412);
    expect((await errorOf(unlinked)).code).toBe('not_linked');
    const disabled = await linkedPlayer(deps, { disabled: true });
    expect((await claim(name, disabled.mcUuid)).status).toBe(403);
    const player = await linkedPlayer(deps);
    expect((await claim('nosuchserver', player.mcUuid)).status).toBe(404);
    expect((await claim('lobby', player.mcUuid)).status).toBe(404);
    expect((await claim(name, player.mcUuid)).status).toBe(200);
    const again = await claim(name, player.mcUuid);
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe('already_claimed');
  });

  it('claims from the panel: 412 unlinked, 200 linked, 409 already claimed, then the owner sees it as owned', async () => {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const { name } = addServer(deps).spec;
    const unlinked = await createUser(deps);
    const unlinkedSession = await signIn(deps, { userId: unlinked.id });
    const refused = await external.request(`/api/v1/servers/${name}/claim`, { method: 'POST', headers: unlinkedSession.headers });
    expect(refused.status).toBe(412);
    const player = await linkedPlayer(deps);
    const session = await signIn(deps, { userId: player.id });
    const ok = await external.request(`/api/v1/servers/${name}/claim`, { method: 'POST', headers: session.headers });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ name, claimed: true });
    const other = await linkedPlayer(deps);
    const otherSession = await signIn(deps, { userId: other.id });
    const taken = await external.request(`/api/v1/servers/${name}/claim`, { method: 'POST', headers: otherSession.headers });
    expect(taken.status).toBe(409);
    const mine = await external.request('/api/v1/me/servers', { headers: session.headers });
    const rows = ((await mine.json()) as { servers: Array<{ name: string; owned: boolean; claimable: boolean }> }).servers;
    expect(rows.find((r) => r.name === name)).toMatchObject({ owned: true, claimable: false, desiredState: 'Stopped' });
    const theirs = await external.request('/api/v1/me/servers', { headers: otherSession.headers });
    expect(((await theirs.json()) as { servers: Array<{ name: string }> }).servers.some((r) => r.name === name)).toBe(false);
  });
});
