import type { BackupRow } from './records.js';
import type { RetentionTier } from './retention.js';
import type { BackupView } from './schema.js';

/** BackupView: the storage reference and the hash stay inside. */
export function toBackupView(row: BackupRow): BackupView {
  return {
    id: row.id,
    server_name: row.serverName,
    size_bytes: row.sizeBytes,
    reason: row.reason,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    ...(row.formerOwner ? { former_owner: row.formerOwner } : {}),
    ...(row.corrupt ? { corrupt: true } : {}),
    ...(row.verifiedAt ? { verified_at: row.verifiedAt.toISOString() } : {}),
    ...(row.skippedEntries > 0 ? { skipped_entries: row.skippedEntries } : {}),
    ...(row.reason === 'scheduled' && row.retention ? { retention: row.retention as RetentionTier } : {}),
  };
}
