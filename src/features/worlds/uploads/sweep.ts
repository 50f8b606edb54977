import { and, inArray } from 'drizzle-orm';
import { worldUploadSessions } from '../../../db/schema/world-files.js';
import { isUuid } from '../../../lib/uuid.js';
import { freeOf, lapsedSession, removeStaged, STAGE_PREFIX, type UploadDeps } from './sessions.js';

/**
 * Drops sessions idle past `upload_session_idle_seconds`, or past `upload_empty_session_idle_seconds`
 * while they received nothing (never one a part or a commit holds), with their staged bytes, and
 * staged bytes no session owns. Returns how many sessions it dropped.
 */
export async function sweepAbandonedUploads(deps: UploadDeps): Promise<number> {
  const { db } = deps.database;
  const gone = await db
    .delete(worldUploadSessions)
    .where(and(await lapsedSession(deps), freeOf(db, deps.clock.now())))
    .returning({ id: worldUploadSessions.id });
  for (const { id } of gone) await removeStaged(deps, id);
  const staged = await deps.staging.list(STAGE_PREFIX);
  const ids = [...new Set(staged.map((o) => o.key.slice(STAGE_PREFIX.length).split('/')[0]!))].filter(isUuid);
  if (ids.length > 0) {
    // Parts are staged only under a claim on the session's row, so bytes listed here without a row are orphans.
    const rows = await db.select({ id: worldUploadSessions.id }).from(worldUploadSessions).where(inArray(worldUploadSessions.id, ids));
    const known = new Set(rows.map((r) => r.id));
    for (const id of ids) if (!known.has(id)) await removeStaged(deps, id);
  }
  if (gone.length > 0) deps.log.info({ sessions: gone.length }, 'swept abandoned world uploads');
  return gone.length;
}
