import { eq } from 'drizzle-orm';
import { serverActivity, serverClaims } from '../../db/schema/servers.js';
import { ApiError } from '../../http/errors.js';
import { serverCacheOf } from '../servers/cache.js';
import { backUpFolder } from './backups.js';
import { recoverWorldFolder } from './restore.js';
import { JobFailure, startWorldJob, type JobDeps } from './run-job.js';

export const IDLE_RECLAIM_MS = 15 * 24 * 60 * 60 * 1000;

/** When the world was last in use: the later of its last start and last join, else its claim. */
async function lastUsed(deps: JobDeps, serverName: string): Promise<Date | undefined> {
  const { db } = deps.database;
  const [activity] = await db.select().from(serverActivity).where(eq(serverActivity.serverName, serverName));
  const times = [activity?.readyAt, activity?.lastJoinAt].filter((t): t is Date => t instanceof Date);
  if (times.length > 0) return new Date(Math.max(...times.map((t) => t.getTime())));
  const [claim] = await db.select({ at: serverClaims.claimedAt }).from(serverClaims).where(eq(serverClaims.serverName, serverName));
  return claim?.at;
}

/**
 * Idle reclaim: a world whose server sat stopped 15 days is archived (`inactive_15d`, read back and
 * verified by the backup itself) and only then its volume is released. The former owner keeps the
 * backup and can restore it. A failed or corrupt archive keeps the volume.
 */
export async function reclaimIdleWorlds(deps: JobDeps): Promise<string[]> {
  const folders = deps.worlds.folders;
  if (!folders) return [];
  const cache = serverCacheOf(deps);
  if (!cache.synced) return [];
  const cutoff = deps.clock.now().getTime() - IDLE_RECLAIM_MS;
  const reclaimed: string[] = [];
  for (const server of cache.all()) {
    const { spec, status } = server.resource;
    if (server.system || status.phase !== 'Stopped' || spec.desiredState === 'Running') continue;
    if (!(await folders.exists(spec.name))) continue;
    const used = await lastUsed(deps, spec.name);
    if (!used || used.getTime() > cutoff) continue;
    try {
      const { done } = await startWorldJob(deps, { serverName: spec.name, kind: 'reclaim', lockKind: 'reclaim', requestedBy: 'idle-reclaim' }, async () => {
        const folder = await folders.folder(spec.name);
        await recoverWorldFolder(folder);
        const [claim] = await deps.database.db.select({ userId: serverClaims.userId }).from(serverClaims).where(eq(serverClaims.serverName, spec.name));
        const backup = await backUpFolder(deps, { serverName: spec.name, folder, reason: 'inactive_15d', formerOwner: claim?.userId });
        if (backup.corrupt || backup.verifiedAt === null) throw new JobFailure('the archive did not verify; the volume is kept');
        await folders.release(spec.name);
        reclaimed.push(spec.name);
        return { backupId: backup.id };
      });
      await done;
    } catch (err) {
      if (err instanceof ApiError) continue; // held or woken meanwhile: try again on the next pass
      throw err;
    }
  }
  return reclaimed;
}
