import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach } from 'vitest';
import { LocalBackupStore } from '../../src/adapters/backup-store/local.js';
import { RconPool } from '../../src/adapters/rcon/pool.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import { serverSchedules } from '../../src/db/schema/schedules.js';
import { advanceRestarts, syncedCache } from '../../src/features/servers/index.js';
import { createSchedule } from '../../src/features/schedules/service.js';
import type { ScheduleInput } from '../../src/features/schedules/schema.js';
import { createTestDeps, type TestDeps } from './app.js';
import { startRconPeer, type RconPeer } from './rcon-peer.js';
import { addServer } from './servers.js';
import { claimFor, testWorlds, useTempDir } from './worlds.js';

/**
 * The schedule runner's test rig: deps whose RCON reaches a TCP peer, with world folders and a
 * local store, and one server with a world, owned by the account `owner` makes. Call at the top of
 * a test file (it registers the peers' and folders' clean-up).
 */
export function useScheduleRig(database: () => DatabaseHandle) {
  const tempDir = useTempDir();
  const peers: RconPeer[] = [];
  afterEach(async () => {
    await Promise.all(peers.splice(0).map((p) => p.close()));
  });
  return async <O extends { id: string }>(owner: (deps: TestDeps) => Promise<O>, start = '2026-06-01T12:00:00.000Z') => {
    const peer = await startRconPeer({ password: 'rcon-secret' });
    peers.push(peer);
    const root = tempDir();
    const worlds = testWorlds(root, new LocalBackupStore(join(root, 'backups')));
    const deps = createTestDeps(database(), { overrides: { worlds, rcon: new RconPool(async () => peer.endpoint, { commandTimeoutMs: 1000 }) } });
    deps.clock.set(start);
    const account = await owner(deps);
    const { name } = addServer(deps).spec;
    await claimFor(deps, name, account.id);
    writeFileSync(join(await worlds.folders.folder(name), 'server.properties'), 'motd=scheduled\n');
    await syncedCache(deps);
    const caller = { session: { userId: account.id, role: 'user' } as never, requestId: undefined };
    const schedule = (input: ScheduleInput) => createSchedule(deps, name, input, caller);
    const row = async (id: number) => (await deps.database.db.select().from(serverSchedules).where(eq(serverSchedules.id, id)))[0]!;
    return { deps, peer, name, owner: account, worlds, caller, schedule, row };
  };
}

/** The server started and running in the cluster's model. */
export async function runServer(deps: TestDeps, name: string): Promise<void> {
  await deps.cluster.setDesiredState(name, 'Running');
  deps.clock.advance(deps.cluster.options.startDelayMs);
  deps.cluster.tick();
}

/** The cluster's model and the restart round move on, as they would between two schedule rounds. */
export async function settle(deps: TestDeps, ms: number): Promise<void> {
  deps.clock.advance(ms);
  deps.cluster.tick();
  await advanceRestarts(deps);
}
