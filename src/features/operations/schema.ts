import { z } from '@hono/zod-openapi';

const DateTime = z.iso.datetime({ offset: true });
/** Contract section 8: the freshness limit of the update report and the database backup status. */
export const FRESHNESS_LIMIT_SECONDS = 26 * 60 * 60;

export const UpdateWindowSchema = z
  .strictObject({
    start: DateTime.nullable().openapi({ description: 'inclusive; null with `end` null clears the window' }),
    end: DateTime.nullable().openapi({ description: 'exclusive' }),
  })
  .openapi('UpdateWindow');
export type UpdateWindowView = z.infer<typeof UpdateWindowSchema>;

export const UpdaterWindowSchema = UpdateWindowSchema.extend({
  open: z.boolean().openapi({ description: 'now is inside the window: an update may be applied' }),
}).openapi('UpdaterWindow');

// Versions and names of software, as a feed or a package manager prints them.
const Version = z.string().min(1).max(128);
const Text = z.string().max(1024);

export const UpdateComponentSchema = z
  .strictObject({
    name: z.string().min(1).max(128),
    state: z.enum(['current', 'available', 'unknown', 'unreadable', 'pinned']),
    current: Version.optional(),
    latest: Version.optional(),
    selector: z.string().max(128).optional(),
    note: Text.optional(),
    error: Text.optional(),
  })
  .refine((c) => c.latest === undefined || c.state === 'available', {
    message: '`latest` is given only when the state is `available`',
    path: ['latest'],
  })
  .refine((c) => c.current === undefined || c.state !== 'unreadable', {
    message: '`current` is omitted when the installed version is unreadable',
    path: ['current'],
  })
  .openapi('UpdateComponent');

export const UpdateReportRecordSchema = z
  .strictObject({
    checked_at: DateTime,
    felis: Version.openapi({ description: 'version of the checking binary' }),
    components: z.array(UpdateComponentSchema).max(200),
  })
  .openapi('UpdateReportRecord');

export const UpdateReportSchema = z
  .object({
    report: UpdateReportRecordSchema.nullable(),
    stale: z.boolean(),
    max_age_seconds: z.number().int(),
  })
  .openapi('UpdateReport');

export const DbBackupLabel = z.enum(['daily', 'pre-migrate', 'pre-restore', 'manual']);

export const DbBackupRecordSchema = z
  .strictObject({
    at: DateTime,
    name: z.string().min(1).max(255).regex(/^[\w.-]+$/, 'a bundle file name'),
    label: DbBackupLabel,
    size_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    dir: z.string().min(1).max(1024),
    felis_version: Version.optional(),
    schema_version: z.number().int().min(0).max(1_000_000).optional(),
  })
  .openapi('DBBackup');

export const DbBackupStatusSchema = z
  .object({
    last: DbBackupRecordSchema.nullable(),
    stale: z.boolean(),
    max_age_seconds: z.number().int(),
  })
  .openapi('DBBackupStatus');
