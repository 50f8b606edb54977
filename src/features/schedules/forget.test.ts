import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, jsonRequest } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer } from '../../../test/helpers/servers.js';
import { claimFor, worldMember } from '../../../test/helpers/worlds.js';
import { auditLog } from '../../db/schema/audit.js';
import { serverClaims, serverRetirements } from '../../db/schema/servers.js';
import { serverSchedules } from '../../db/schema/schedules.js';
import { forgetDeletedServer, sweepRetirements } from '../servers/index.js';
import { forgetServerSchedules } from './index.js';

const nightly = { label: 'Nightly restart', action: 'restart', minute_of_day: 240, weekdays: 127, timezone: 'Europe/Berlin', warn_minutes: 5 };
const hourly = { action: 'command', command: 'say hi', every_minutes: 60, weekdays: 127, timezone: 'UTC' };

/**
 * A server deleted with kubectl: the controller's finalizer forgets it (servers' forgetDeletedServer,
 * handed the schedules feature's forgetServerSchedules by the composition root), and its schedules
 * go with its other rows, so a server made again under the name starts with none.
 */
describe('forgetting a server deleted in the cluster', () => {
  const database = useTestDatabase();

  async function setUp() {
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const owner = await worldMember(deps);
    const server = async () => {
      const { name } = addServer(deps).spec;
      await claimFor(deps, name, owner.id);
      for (const body of [nightly, hourly]) {
        const created = await external.request(`/api/v1/servers/${name}/schedules`, jsonRequest('POST', body, owner.headers));
        expect(created.status).toBe(201);
      }
      return name;
    };
    const schedulesOf = async (name: string) => (await deps.database.db.select().from(serverSchedules).where(eq(serverSchedules.serverName, name))).length;
    const claimsOf = async (name: string) => (await deps.database.db.select().from(serverClaims).where(eq(serverClaims.serverName, name))).length;
    return { deps, server, schedulesOf, claimsOf };
  }

  it("removes the server's schedules, a run in progress included, with its other rows, and only that server's; the audit row counts them", async () => {
    const { deps, server, schedulesOf, claimsOf } = await setUp();
    const deleted = await server();
    const kept = await server();
    await deps.database.db.update(serverSchedules).set({ runState: 'backing_up', runStepAt: deps.clock.now() }).where(eq(serverSchedules.serverName, deleted));

    await forgetDeletedServer(deps, deleted, [forgetServerSchedules]);

    expect(await schedulesOf(deleted)).toBe(0);
    expect(await claimsOf(deleted)).toBe(0);
    expect(await schedulesOf(kept)).toBe(2);
    expect(await claimsOf(kept)).toBe(1);
    const [audit] = await deps.database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'server.deleted_in_cluster'), eq(auditLog.target, deleted)));
    // The claim and the two schedules.
    expect(audit?.detail).toEqual({ rows: 3 });
  });

  it('removes nothing when a step fails: the finalizer keeps the resource and tries again (one transaction)', async () => {
    const { deps, server, schedulesOf, claimsOf } = await setUp();
    const name = await server();
    const failing = async () => {
      throw new Error('database unreachable');
    };

    await expect(forgetDeletedServer(deps, name, [forgetServerSchedules, failing])).rejects.toThrow('database unreachable');
    expect(await schedulesOf(name)).toBe(2);
    expect(await claimsOf(name)).toBe(1);

    await forgetDeletedServer(deps, name, [forgetServerSchedules]);
    expect(await schedulesOf(name)).toBe(0);
  });
  it("removes a released server's schedules when the retirement sweep carries it out, so its next claimant sees none", async () => {
    const { deps, server, schedulesOf, claimsOf } = await setUp();
    const released = await server();
    const kept = await server();
    await deps.database.db.insert(serverRetirements).values({ serverName: released, requestedAt: deps.clock.now(), requestedBy: (await worldMember(deps)).id, delete: false });
    // The composition root hands the servers module the same list as the finalizer (src/app/modules.ts).
    expect(await sweepRetirements(deps, [forgetServerSchedules])).toEqual([released]);
    expect(await schedulesOf(released)).toBe(0);
    expect(await claimsOf(released)).toBe(0);
    expect(await schedulesOf(kept)).toBe(2);
  });
});
