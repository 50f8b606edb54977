import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { serverClaims } from '../../src/db/schema/servers.js';
import type { SimulatedCluster } from '../../src/adapters/cluster/simulated.js';
import { TOKENS, type TestDeps } from '../helpers/app.js';
import { startTestService } from '../helpers/service.js';
import { claimFor, worldMember } from '../helpers/worlds.js';

describe('the embedded default across a restart (issue 30, item 7)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'felis-embedded-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps the servers a user made, with their owners, and starts again the ones that were running', async () => {
    // DATABASE_URL unset: the embedded database in DATA_DIR, as `npm start` runs.
    const env = { DATABASE_URL: undefined, DATA_DIR: dataDir };
    const first = await startTestService(env);
    let ownerId: string;
    try {
      const cluster = first.deps.cluster as SimulatedCluster;
      await cluster.createServer({ name: 'kept', subdomain: 'kept', memory: '2Gi', storage: '5Gi', labels: {} });
      await cluster.createServer({ name: 'awake', subdomain: 'awake', memory: '2Gi', storage: '5Gi', labels: {} });
      await cluster.setDesiredState('awake', 'Running');
      await cluster.updateServer('kept', { displayName: 'Kept world' });
      const owner = await worldMember(first.deps as unknown as TestDeps);
      ownerId = owner.id;
      await claimFor(first.deps as unknown as TestDeps, 'kept', owner.id);
    } finally {
      await first.stop();
    }

    const second = await startTestService(env);
    try {
      const cluster = second.deps.cluster as SimulatedCluster;
      expect(cluster.server('kept')?.spec).toMatchObject({ name: 'kept', displayName: 'Kept world', desiredState: 'Stopped', memory: '2Gi' });
      expect(cluster.server('awake')?.spec.desiredState).toBe('Running');
      expect(cluster.server('awake')?.status.phase).toBe('Starting');
      expect(cluster.server('lobby')).toBeDefined();
      const fleet = await fetch(`http://127.0.0.1:${second.internal.port}/api/v1/servers`, { headers: { Authorization: `Bearer ${TOKENS.proxy}` } });
      const names = ((await fleet.json()) as { servers: { name: string }[] }).servers.map((s) => s.name);
      expect(names).toEqual(expect.arrayContaining(['kept', 'awake', 'lobby', 'login']));
      // The owner the database kept has the server it names.
      const owned = await second.deps.database.db.select().from(serverClaims).where(eq(serverClaims.serverName, 'kept'));
      expect(owned.map((c) => c.userId)).toEqual([ownerId!]);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
