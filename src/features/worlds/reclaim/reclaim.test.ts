import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { addServer } from '../../../../test/helpers/servers.js';
import { createUser } from '../../../../test/helpers/sessions.js';
import { BackupStoreFullError } from '../../../adapters/backup-store/types.js';
import { serverActivity, serverClaims } from '../../../db/schema/servers.js';
import { worldBackups, worldJobs } from '../../../db/schema/worlds.js';
import { IDLE_RECLAIM_MS, reclaimIdleWorlds } from './service.js';
import { restoreFolder } from '../backups/folders.js';
import { testWorlds, useTempDir } from '../../../../test/helpers/worlds.js';

describe('idle reclaim', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  it('archives a world stopped 15 days, verifies it, then releases the volume; the former owner keeps the backup', async () => {
    const worlds = testWorlds(tempDir());
    const deps = createTestDeps(database(), { overrides: { worlds } });
    await deps.serverCache.ready();
    const owner = await createUser(deps);
    const idle = addServer(deps).spec.name;
    const busy = addServer(deps).spec.name;
    const running = addServer(deps).spec.name;
    for (const name of [idle, busy, running]) {
      await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId: owner.id, claimedAt: deps.clock.now() });
      writeFileSync(join(await worlds.folders.folder(name), 'level.dat'), `world of ${name}`);
    }
    await deps.cluster.setDesiredState(running, 'Running');
    deps.clock.advance(IDLE_RECLAIM_MS - 60_000);
    await deps.database.db.insert(serverActivity).values({ serverName: busy, lastJoinAt: deps.clock.now() });

    expect(await reclaimIdleWorlds(deps)).toEqual([]);
    deps.clock.advance(120_000);
    expect(await reclaimIdleWorlds(deps)).toEqual([idle]);

    expect(await worlds.folders.exists(idle)).toBe(false);
    expect(await worlds.folders.exists(busy)).toBe(true);
    expect(await worlds.folders.exists(running)).toBe(true);
    const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, idle));
    expect(backup).toMatchObject({ reason: 'inactive_15d', status: 'present', formerOwner: owner.id, corrupt: false });
    expect(backup!.verifiedAt).not.toBeNull();
    const [job] = await deps.database.db.select().from(worldJobs).where(eq(worldJobs.serverName, idle));
    expect(job).toMatchObject({ kind: 'reclaim', state: 'succeeded', backupId: backup!.id });

    // The world comes back from the backup into a fresh volume.
    await restoreFolder(deps, backup!, await worlds.folders.folder(idle), 'back');
    expect(await worlds.folders.exists(idle)).toBe(true);
  });

  it('keeps the volume when the archive cannot be stored', async () => {
    const worlds = testWorlds(tempDir());
    const deps = createTestDeps(database(), { overrides: { worlds } });
    await deps.serverCache.ready();
    const owner = await createUser(deps);
    const name = addServer(deps).spec.name;
    await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId: owner.id, claimedAt: deps.clock.now() });
    writeFileSync(join(await worlds.folders.folder(name), 'level.dat'), 'keep me');
    deps.clock.advance(IDLE_RECLAIM_MS + 1);
    worlds.store.put = async () => {
      throw new BackupStoreFullError('full');
    };
    expect(await reclaimIdleWorlds(deps)).toEqual([]);
    expect(await worlds.folders.exists(name)).toBe(true);
    const [job] = await deps.database.db.select().from(worldJobs).where(eq(worldJobs.serverName, name));
    expect(job).toMatchObject({ kind: 'reclaim', state: 'failed', message: 'backup_store_full: the backup store is full' });
  });
});
