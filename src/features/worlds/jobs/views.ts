import type { JobRow } from './records.js';

/** ServerJob: a job row as the panel shows it. */
export function toServerJob(row: JobRow) {
  return {
    name: row.id,
    kind: row.kind,
    state: row.state,
    ...(row.message ? { message: row.message } : {}),
    ...(row.backupId ? { backup_id: row.backupId } : {}),
    started_at: row.startedAt.toISOString(),
    ...(row.finishedAt ? { finished_at: row.finishedAt.toISOString() } : {}),
  };
}
