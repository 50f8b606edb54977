import { createHash } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { rawBodyOf } from '../../http/raw-body.js';
import { createRouter, defineRoute, errorAnswer, json, rawBody } from '../../http/route.js';
import type { SessionContext } from '../../http/session.js';
import { ServerNameParam } from '../servers/index.js';
import { requireStopped, requireWorld } from './access.js';
import { newId } from './jobs.js';
import { holdWorld } from './lock.js';
import { WorldPath } from './path-schema.js';
import { fileOpsOf, type WorldFileOps } from './world-file-ops.js';

const SHA256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha-256');
/** Base64 (standard alphabet, padded): the editor's encoding of a file's bytes. */
const BASE64 = z.string().regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, 'must be base64');
const PathQuery = z.object({ path: WorldPath.default('') }).strict();
const RequiredPathQuery = z.object({ path: WorldPath.pipe(z.string().min(1)) }).strict();

export const SMALL_UPLOAD_MAX_BYTES = 32 * 1024 * 1024;

const EntrySchema = z.object({ name: z.string(), size: z.number().int(), is_dir: z.boolean(), mod_time: z.string() }).openapi('ServerFileEntry');
const ListingSchema = z
  .object({ path: z.string(), entries: z.array(EntrySchema), truncated: z.boolean(), free_bytes: z.number().int() })
  .openapi('ServerFileListing');
const FileSchema = z.object({ path: z.string(), content: z.string(), sha256: z.string(), content_sha256: z.string() }).openapi('ServerFile');
const WriteBody = z
  .object({
    content: BASE64.max(1_400_000),
    content_sha256: SHA256.optional(),
    expect_sha256: SHA256.optional(),
    create_only: z.boolean().optional(),
  })
  .strict()
  .openapi('ServerFileWrite');
const WrittenSchema = z.object({ path: z.string(), status: z.string(), sha256: z.string() }).openapi('ServerFileWritten');
const DoneSchema = z.object({ path: z.string(), status: z.string() }).openapi('ServerFileDone');
const RenameBody = z.object({ to: WorldPath.pipe(z.string().min(1)) }).strict().openapi('ServerFileRename');
const RenamedSchema = z.object({ path: z.string(), to: z.string(), status: z.string() }).openapi('ServerFileRenamed');
const UploadQuery = z.object({ path: WorldPath.pipe(z.string().min(1)), overwrite: z.enum(['true', 'false']).optional() }).strict();
const UploadedSchema = z.object({ path: z.string(), status: z.string(), sha256: z.string(), size: z.number().int() }).openapi('ServerFileUploaded');

const fileErrors = {
  400: errorAnswer('bad_request or bad_path'),
  403: errorAnswer('not the owner or staff'),
  404: errorAnswer('no such server, or nothing at the path'),
  409: errorAnswer('not_stopped, maintenance_in_progress, file_exists'),
  503: errorAnswer('the world volumes cannot be reached'),
};
const writeErrors = { ...fileErrors, 507: errorAnswer('volume_full') };

const route = <P extends string>(method: 'get' | 'put' | 'post' | 'delete', path: P, summary: string) => ({ method, path, summary });

const list = defineRoute({ tier: 'app' }, {
  ...route('get', '/api/v1/servers/{name}/files', 'List a folder of a stopped world'),
  request: { params: ServerNameParam, query: PathQuery },
  responses: { 200: json(ListingSchema, 'the folder'), ...fileErrors },
});
const read = defineRoute({ tier: 'app' }, {
  ...route('get', '/api/v1/servers/{name}/file', 'Read a file (base64) with its sha-256'),
  request: { params: ServerNameParam, query: RequiredPathQuery },
  responses: { 200: json(FileSchema, 'the file'), ...fileErrors, 413: errorAnswer('too_large: download it instead') },
});
const write = defineRoute({ tier: 'app' }, {
  ...route('put', '/api/v1/servers/{name}/file', 'Write a file atomically (expect_sha256 or create_only)'),
  request: { params: ServerNameParam, query: RequiredPathQuery, body: { content: { 'application/json': { schema: WriteBody } } } },
  responses: {
    200: json(WrittenSchema, 'written'),
    ...writeErrors,
    400: errorAnswer('bad_request, bad_path or digest_mismatch (content_sha256)'),
    413: errorAnswer('too_large: over what a file Job carries (Kubernetes)'),
    409: errorAnswer('not_stopped, maintenance_in_progress, file_changed or file_exists'),
  },
});
const remove = defineRoute({ tier: 'app' }, {
  ...route('delete', '/api/v1/servers/{name}/file', 'Delete a file, a link or a folder'),
  request: { params: ServerNameParam, query: RequiredPathQuery },
  responses: { 200: json(DoneSchema, 'deleted'), ...fileErrors },
});
const mkdirRoute = defineRoute({ tier: 'app' }, {
  ...route('post', '/api/v1/servers/{name}/files/mkdir', 'Make a folder in an existing one'),
  request: { params: ServerNameParam, query: RequiredPathQuery },
  responses: { 200: json(DoneSchema, 'created'), ...writeErrors },
});
const renameRoute = defineRoute({ tier: 'app' }, {
  ...route('post', '/api/v1/servers/{name}/files/rename', 'Move a path, never over something'),
  request: { params: ServerNameParam, query: RequiredPathQuery, body: { content: { 'application/json': { schema: RenameBody } } } },
  responses: { 200: json(RenamedSchema, 'renamed'), ...fileErrors },
});
const upload = defineRoute(
  { tier: 'app' },
  {
    ...route('put', '/api/v1/servers/{name}/files/upload', 'Upload a file’s raw bytes (Content-Digest verified when sent)'),
    request: { params: ServerNameParam, query: UploadQuery, ...rawBody('application/octet-stream') },
    responses: {
      200: json(UploadedSchema, 'stored'),
      ...writeErrors,
      409: errorAnswer('not_stopped, maintenance_in_progress or file_exists'),
      413: errorAnswer('too_large: over small_upload_max_bytes, or over 256 KiB on Kubernetes'),
    },
  },
  { rawBody: { limit: { name: 'small_upload_max_bytes', bytes: SMALL_UPLOAD_MAX_BYTES }, digest: 'optional' } },
);

type FileDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'worlds' | 'clock' | 'random' | 'log'>;

/** The file operations of a stopped server's world the caller may touch. */
async function openWorld(deps: FileDeps, name: string, session: SessionContext): Promise<WorldFileOps> {
  await requireWorld(deps, name, session);
  const ops = fileOpsOf(deps);
  await requireStopped(deps, name);
  return ops;
}

/** Runs a change to a world's files under its lock (behind other short writes), stopped server checked again. */
async function changeWorld<T>(deps: FileDeps, name: string, session: SessionContext, change: (ops: WorldFileOps) => Promise<T>): Promise<T> {
  const ops = await openWorld(deps, name, session);
  const lock = await holdWorld(deps, name, newId(deps.random), 'file_write', { queueBehind: 'file_write' });
  try {
    await requireStopped(deps, name);
    return await change(ops);
  } finally {
    await lock.release();
  }
}

function decodeContent(content: string, contentSha256: string | undefined): Buffer {
  const bytes = Buffer.from(content, 'base64');
  if (contentSha256 !== undefined) {
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== contentSha256) throw new DomainError('digest_mismatch', 'content_sha256 does not match the content.');
  }
  return bytes;
}

/** File routes of the external face (owner or staff; the server must be stopped). */
export function externalFileRoutes() {
  return createRouter()
    .openapi(list, async (c) => {
      const { name } = c.req.valid('param');
      const ops = await openWorld(c.var.deps, name, c.var.session);
      return c.json(await ops.list(name, c.req.valid('query').path), 200);
    })
    .openapi(read, async (c) => {
      const { name } = c.req.valid('param');
      const ops = await openWorld(c.var.deps, name, c.var.session);
      return c.json(await ops.read(name, c.req.valid('query').path), 200);
    })
    .openapi(write, async (c) => {
      const body = c.req.valid('json');
      if (body.create_only && body.expect_sha256) throw new DomainError('bad_request', 'Send expect_sha256 or create_only, not both.');
      const bytes = decodeContent(body.content, body.content_sha256);
      const { name } = c.req.valid('param');
      const written = await changeWorld(c.var.deps, name, c.var.session, (ops) =>
        ops.write(name, c.req.valid('query').path, bytes, { expectSha256: body.expect_sha256, createOnly: body.create_only }),
      );
      return c.json(written, 200);
    })
    .openapi(remove, async (c) => {
      const { name } = c.req.valid('param');
      const done = await changeWorld(c.var.deps, name, c.var.session, (ops) => ops.remove(name, c.req.valid('query').path));
      return c.json(done, 200);
    })
    .openapi(mkdirRoute, async (c) => {
      const { name } = c.req.valid('param');
      const done = await changeWorld(c.var.deps, name, c.var.session, (ops) => ops.mkdir(name, c.req.valid('query').path));
      return c.json(done, 200);
    })
    .openapi(renameRoute, async (c) => {
      const { name } = c.req.valid('param');
      const done = await changeWorld(c.var.deps, name, c.var.session, (ops) => ops.rename(name, c.req.valid('query').path, c.req.valid('json').to));
      return c.json(done, 200);
    })
    .openapi(upload, async (c) => {
      const { path, overwrite } = c.req.valid('query');
      const body = rawBodyOf(c);
      const { name } = c.req.valid('param');
      const stored = await changeWorld(c.var.deps, name, c.var.session, (ops) => ops.upload(name, path, body, { overwrite: overwrite === 'true' }));
      return c.json({ ...stored, sha256: body.sha256 }, 200);
    });
}
