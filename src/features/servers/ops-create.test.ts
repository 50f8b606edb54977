import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLog } from '../../db/schema/index.js';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { uniqueServerName } from '../../../test/helpers/servers.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';

describe("ops: the operator's server create (felis server create)", () => {
  const database = useTestDatabase();

  it('makes a stopped server with the admin route\'s rules, audited to the operator', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const name = uniqueServerName('ops');
    const res = await internal.request('/api/v1/internal/servers', jsonRequest('POST', { name, subdomain: name, os_user: 'alice', memory: '2Gi' }, bearer('ops')));
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ name, subdomain: name, desiredState: 'Stopped' });
    expect(deps.cluster.server(name)!.spec).toMatchObject({ desiredState: 'Stopped', memory: '2Gi', image: 'itzg/minecraft-server:java21' });
    const audit = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.action, 'server.create'), eq(auditLog.target, name)));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'ops:alice' });

    const unnamed = uniqueServerName('ops');
    const bare = await internal.request('/api/v1/internal/servers', jsonRequest('POST', { name: unnamed, subdomain: unnamed }, bearer('ops')));
    expect(bare.status).toBe(201);
    const [entry] = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.action, 'server.create'), eq(auditLog.target, unnamed)));
    expect(entry?.actor).toBe('ops');
  });

  it('answers the documented refusals, never a 500', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    const name = uniqueServerName('ops');
    const send = (body: unknown) => internal.request('/api/v1/internal/servers', jsonRequest('POST', body, bearer('ops')));
    expect((await send({ name, subdomain: name })).status).toBe(201);
    const taken = await send({ name, subdomain: uniqueServerName('other') });
    expect(taken.status).toBe(409);
    expect((await errorOf(taken)).code).toBe('conflict');
    const cases: Array<[unknown, number, string]> = [
      [{ name: 'Bad_Name', subdomain: 'x' }, 400, 'bad_request'],
      [{ name: uniqueServerName('ops'), subdomain: 'panel' }, 400, 'bad_name'],
      [{ name: uniqueServerName('ops'), subdomain: uniqueServerName('s'), os_user: 'rm -rf /' }, 400, 'bad_name'],
      [{ name: uniqueServerName('ops'), subdomain: uniqueServerName('s'), extra: 1 }, 400, 'bad_request'],
      [{ name: uniqueServerName('ops'), subdomain: uniqueServerName('s'), image: 'not/whitelisted:1' }, 400, 'image_not_whitelisted'],
      [{}, 400, 'bad_request'],
    ];
    for (const [body, status, code] of cases) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect((await errorOf(res)).code, JSON.stringify(body)).toBe(code);
    }
    const notJson = await internal.request('/api/v1/internal/servers', { method: 'POST', headers: { ...bearer('ops'), 'Content-Type': 'application/json' }, body: '{' });
    expect(notJson.status).toBe(400);
  });

  it('admits only the ops token', async () => {
    const deps = createTestDeps(database());
    const { internal } = createTestApps(deps);
    await expectTierMatrix(internal, [{ method: 'POST', path: '/api/v1/internal/servers', access: { tier: 'service', callers: ['ops'] } }]);
  });
});
