import { readdir, rm } from 'node:fs/promises';
import { and, inArray } from 'drizzle-orm';
import { worldUploadSessions } from '../../../db/schema/world-files.js';
import { isErrno } from '../../../lib/errno.js';
import { isUuid } from '../../../lib/uuid.js';
import { freeOf, lapsedSession, stageDir, stagedFile, type UploadDeps } from './sessions.js';

/**
 * Drops sessions idle past `upload_session_idle_seconds`, or past `upload_empty_session_idle_seconds`
 * while they received nothing (never one a part or a commit holds), with
 * their staged bytes, and staged files no session owns. Returns how many sessions it dropped.
 */
export async function sweepAbandonedUploads(deps: UploadDeps): Promise<number> {
  const { db } = deps.database;
  const gone = await db
    .delete(worldUploadSessions)
    .where(and(await lapsedSession(deps), freeOf(db, deps.clock.now())))
    .returning({ id: worldUploadSessions.id });
  for (const { id } of gone) await rm(stagedFile(deps, id), { force: true });
  let names: string[] = [];
  try {
    names = await readdir(stageDir(deps));
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
  const ids = names.filter((n) => n.endsWith('.part') && isUuid(n.slice(0, -5))).map((n) => n.slice(0, -5));
  if (ids.length > 0) {
    // A session's row is written before its file, so a file listed here without a row is an orphan.
    const rows = await db.select({ id: worldUploadSessions.id }).from(worldUploadSessions).where(inArray(worldUploadSessions.id, ids));
    const known = new Set(rows.map((r) => r.id));
    for (const id of ids) if (!known.has(id)) await rm(stagedFile(deps, id), { force: true });
  }
  if (gone.length > 0) deps.log.info({ sessions: gone.length }, 'swept abandoned world uploads');
  return gone.length;
}
