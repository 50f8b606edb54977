import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { randomMcUuid } from '../../../test/helpers/servers.js';
import { SessionStandIn } from '../../../test/helpers/session-stand-in.js';
import { createUser, linkAccount } from '../../../test/helpers/sessions.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { auditLog } from '../../db/schema/audit.js';
import { barredPlayers } from '../../db/schema/verifier.js';
import { BAR_MAX_STALE_MS } from '../verifier/bar-list.js';
import { RECLAIM_HOLD_MS } from './service.js';

const reclaim = (deps: TestDeps, body: unknown) =>
  createTestApps(deps).internal.request('/api/v1/internal/player/reclaim', jsonRequest('POST', body, bearer('proxy')));

async function blacklisted(deps: TestDeps, mcUuid: string, caller: 'proxy' | 'limbo' = 'limbo'): Promise<boolean> {
  const res = await createTestApps(deps).internal.request(`/api/v1/internal/player/blacklist/${mcUuid}`, { headers: bearer(caller) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { blacklisted: boolean }).blacklisted;
}

describe('reclaim and the blacklist', () => {
  const database = useTestDatabase();
  const standIns: SessionStandIn[] = [];
  afterAll(async () => {
    await Promise.all(standIns.map((s) => s.close()));
  });

  it('bars the squatter UUID (never the name), holds the data 30 days, audits it; a repeat is a no-op', async () => {
    const deps = createTestDeps(database());
    const squatter = randomMcUuid();
    const genuine = randomMcUuid();
    expect(await blacklisted(deps, squatter)).toBe(false);

    const res = await reclaim(deps, { squatter_uuid: squatter, username: 'Notch', data_ref: 's3://holds/notch' });
    expect(res.status).toBe(200);
    const holdExpiresAt = new Date(deps.clock.now().getTime() + RECLAIM_HOLD_MS).toISOString();
    expect(await res.json()).toEqual({ blacklisted: true, username: 'Notch', hold_expires_at: holdExpiresAt });
    expect(await blacklisted(deps, squatter)).toBe(true);
    expect(await blacklisted(deps, squatter.replaceAll('-', '').toUpperCase(), 'proxy')).toBe(true);
    expect(await blacklisted(deps, genuine)).toBe(false);

    deps.clock.advance(86_400_000);
    const again = await reclaim(deps, { squatter_uuid: squatter, username: 'Notch' });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { hold_expires_at: string }).hold_expires_at).toBe(holdExpiresAt);
    const rows = await deps.database.db.select().from(barredPlayers).where(eq(barredPlayers.mcUuid, squatter));
    expect(rows).toEqual([expect.objectContaining({ username: 'Notch', dataRef: 's3://holds/notch' })]);
    const audits = await deps.database.db.select().from(auditLog).where(eq(auditLog.target, squatter));
    expect(audits.map((a) => a.action)).toEqual(['player.reclaim']);
  });

  it('never reclaims a UUID linked to staff: 409 protected_admin, audited, nothing barred', async () => {
    const deps = createTestDeps(database());
    for (const role of ['admin', 'owner'] as const) {
      const staff = await createUser(deps, { role });
      const mcUuid = randomMcUuid();
      await linkAccount(deps, { userId: staff.id, mcUuid, authSource: 'thirdparty' });
      const res = await reclaim(deps, { squatter_uuid: mcUuid, username: 'Op' });
      expect(res.status).toBe(409);
      expect((await errorOf(res)).code).toBe('protected_admin');
      expect(await blacklisted(deps, mcUuid)).toBe(false);
      const [audit] = await deps.database.db.select().from(auditLog).where(eq(auditLog.target, mcUuid));
      expect(audit).toMatchObject({ action: 'player.reclaim.refused', detail: expect.objectContaining({ reason: 'protected_admin' }) });
    }
    const player = await createUser(deps);
    const linkedPlayer = randomMcUuid();
    await linkAccount(deps, { userId: player.id, mcUuid: linkedPlayer });
    expect((await reclaim(deps, { squatter_uuid: linkedPlayer, username: 'Steve' })).status).toBe(200);
  });

  it('takes effect on hasJoined at once on the reclaiming replica and within seconds on another', async () => {
    const source = await SessionStandIn.start();
    standIns.push(source);
    const squatter = '5a0e4c3b-2d1f-4e6a-9b8c-7d6e5f4a3b2c';
    source.behaviour = { kind: 'profile', body: { id: squatter.replaceAll('-', ''), name: 'Squat', properties: [] } };
    const env = { SESSION_SOURCES: JSON.stringify([{ name: 'mojang', url: source.url, primary: true }]) };
    const replicaA = createTestDeps(database(), { env });
    const replicaB = createTestDeps(database(), { env });
    const login = '/session/minecraft/hasJoined?username=Squat&serverId=abc';
    const hasJoined = async (deps: TestDeps) => (await createTestApps(deps).internal.request(login)).status;
    try {
      expect(await hasJoined(replicaA)).toBe(200);
      expect(await hasJoined(replicaB)).toBe(200);
      expect((await reclaim(replicaA, { squatter_uuid: squatter, username: 'Squat' })).status).toBe(200);
      expect(await hasJoined(replicaA)).toBe(204);
      replicaB.clock.advance(BAR_MAX_STALE_MS);
      expect(await hasJoined(replicaB)).toBe(204);
    } finally {
      replicaA.sessionVerifier.close();
      replicaB.sessionVerifier.close();
    }
  });

  it('answers 400 to bad bodies and UUIDs, never 500', async () => {
    const deps = createTestDeps(database());
    for (const body of [
      {},
      { squatter_uuid: randomMcUuid() },
      { squatter_uuid: 'nope', username: 'x' },
      { squatter_uuid: randomMcUuid(), username: '' },
      { squatter_uuid: randomMcUuid(), username: 'a\nb' },
      { squatter_uuid: randomMcUuid(), username: 'x'.repeat(65) },
      { squatter_uuid: randomMcUuid(), username: 'x', data_ref: 7 },
      { squatter_uuid: randomMcUuid(), username: 'x', extra: true },
    ]) {
      const res = await reclaim(deps, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    const res = await createTestApps(deps).internal.request('/api/v1/internal/player/blacklist/xyz', { headers: bearer('proxy') });
    expect(res.status).toBe(400);
  });

  it('serves reclaim to the proxy, the blacklist to the proxy and the lobby', async () => {
    const deps = createTestDeps(database());
    await expectTierMatrix(createTestApps(deps).internal, [
      { method: 'POST', path: '/api/v1/internal/player/reclaim', access: { tier: 'service', callers: ['proxy'] } },
      { method: 'GET', path: `/api/v1/internal/player/blacklist/${randomMcUuid()}`, access: { tier: 'service', callers: ['proxy', 'limbo'] } },
    ]);
  });
});
