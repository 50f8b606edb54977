import { z } from '@hono/zod-openapi';
import { WorldPath } from '../volumes/index.js';

const SHA256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha-256');
/** Base64 (standard alphabet, padded): the editor's encoding of a file's bytes. */
const BASE64 = z.string().regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, 'must be base64');
export const PathQuery = z.object({ path: WorldPath.default('') }).strict();
export const RequiredPathQuery = z.object({ path: WorldPath.pipe(z.string().min(1)) }).strict();

const EntrySchema = z.object({ name: z.string(), size: z.number().int(), is_dir: z.boolean(), mod_time: z.string() }).openapi('ServerFileEntry');
export const ListingSchema = z
  .object({ path: z.string(), entries: z.array(EntrySchema), truncated: z.boolean(), free_bytes: z.number().int() })
  .openapi('ServerFileListing');
export const FileSchema = z.object({ path: z.string(), content: z.string(), sha256: z.string(), content_sha256: z.string() }).openapi('ServerFile');
export const WriteBody = z
  .object({
    content: BASE64.max(1_400_000),
    content_sha256: SHA256.optional(),
    expect_sha256: SHA256.optional(),
    create_only: z.boolean().optional(),
  })
  .strict()
  .openapi('ServerFileWrite');
export const WrittenSchema = z.object({ path: z.string(), status: z.string(), sha256: z.string() }).openapi('ServerFileWritten');
export const DoneSchema = z.object({ path: z.string(), status: z.string() }).openapi('ServerFileDone');
export const RenameBody = z.object({ to: WorldPath.pipe(z.string().min(1)) }).strict().openapi('ServerFileRename');
export const RenamedSchema = z.object({ path: z.string(), to: z.string(), status: z.string() }).openapi('ServerFileRenamed');
export const UploadQuery = z.object({ path: WorldPath.pipe(z.string().min(1)), overwrite: z.enum(['true', 'false']).optional() }).strict();
export const UploadedSchema = z.object({ path: z.string(), status: z.string(), sha256: z.string(), size: z.number().int() }).openapi('ServerFileUploaded');
