import { z } from '@hono/zod-openapi';
import { RETENTION_TIERS } from './retention.js';

const int64 = z.number().int();

export const BackupViewSchema = z
  .object({
    id: z.string(),
    server_name: z.string(),
    size_bytes: int64,
    reason: z.enum(['inactive_15d', 'manual', 'pre_restore', 'scheduled']),
    status: z.string(),
    created_at: z.string(),
    expires_at: z.string(),
    former_owner: z.string().optional(),
    corrupt: z.boolean().optional(),
    verified_at: z.string().optional(),
    skipped_entries: z.number().int().optional(),
    /** A scheduled backup: the retention tier that keeps it. */
    retention: z.enum(RETENTION_TIERS).optional(),
  })
  .openapi('BackupView');
export type BackupView = z.infer<typeof BackupViewSchema>;

export const BackupPageSchema = z.object({ backups: z.array(BackupViewSchema), total: int64 }).openapi('BackupPage');

export const BackupListQuery = z
  .object({
    server: z.string().max(63).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  })
  .strict();

export const BackupIdParam = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }),
});

export const BackupStartedSchema = z.object({ name: z.string(), status: z.literal('backing_up') }).openapi('BackupStarted');

export const RestoreBody = z
  .object({
    backup_id: z.uuid().optional(),
    safety_snapshot: z.boolean().optional(),
  })
  .strict()
  .openapi('RestoreRequest');

export const RestoreStartedSchema = z
  .object({ name: z.string(), status: z.literal('restoring'), backup_id: z.string(), safety_snapshot: z.boolean() })
  .openapi('RestoreStarted');

export const BackupDeletedSchema = z.object({ id: z.string(), status: z.literal('expired') }).openapi('BackupDeleted');

/** An operator's OS user name for the audit: what a login name may hold. */
export const BreakGlassBody = z
  .object({ os_user: z.string().max(64).optional() })
  .strict()
  .openapi('BreakGlassBackupRequest');
