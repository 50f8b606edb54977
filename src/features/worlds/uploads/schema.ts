import { z } from '@hono/zod-openapi';
import { ServerNameParam } from '../../servers/index.js';
import { WorldPath } from '../volumes/index.js';

const int = z.number().int();

export const UploadIdParams = ServerNameParam.extend({
  id: z.string().max(64).openapi({ param: { name: 'id', in: 'path' } }),
});

export const UploadPathQuery = z.object({ path: WorldPath.pipe(z.string().min(1)) }).strict();
export const UploadOffsetQuery = z.object({ offset: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }).strict();

export const BeginUploadBody = z
  .object({ size: int.min(0).max(Number.MAX_SAFE_INTEGER) })
  .strict()
  .openapi('FileUploadBegin');

export const UploadSessionSchema = z
  .object({
    id: z.string(),
    path: z.string(),
    size: int,
    received: int,
    part_max_bytes: int,
    parts: z.array(z.object({ size: int, sha256: z.string() })),
  })
  .openapi('FileUploadSession');

export const UploadSessionListSchema = z
  .object({
    uploads: z.array(
      UploadSessionSchema.extend({
        created_at: z.string(),
        expires_at: z.string().openapi({ description: 'when it lapses, with its reserved room, if nothing more arrives' }),
      }),
    ),
  })
  .openapi('FileUploadSessions');

export const FileOpBody = z.object({ overwrite: z.boolean().optional() }).strict().openapi('FileOpRequest');

export const FileOpSchema = z
  .object({
    id: z.string(),
    op: z.enum(['upload', 'unzip']),
    path: z.string(),
    state: z.enum(['running', 'succeeded', 'failed']),
    started_at: z.string(),
    finished_at: z.string().optional(),
    done: int,
    total: int,
    files: int.optional(),
    bytes: int.optional(),
    error: z
      .object({
        code: z.string(),
        message: z.string(),
        entry: z.string().optional(),
        conflicts: z.array(z.string()).optional(),
        conflict_count: int.optional(),
        need: int.optional(),
        avail: int.optional(),
      })
      .optional(),
  })
  .openapi('FileOp');

export const FileOpStartedSchema = z.object({ op: FileOpSchema }).openapi('FileOpStarted');
export const FileOpsSchema = z.object({ ops: z.array(FileOpSchema) }).openapi('FileOps');
