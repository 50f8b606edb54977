import { rawBodyOf } from '../../../http/raw-body.js';
import { createRouter, defineRoute, errorAnswer, json, rawBody } from '../../../http/route.js';
import { ServerNameParam, type ServersParts } from '../../servers/index.js';
import {
  DoneSchema,
  FileSchema,
  ListingSchema,
  PathQuery,
  RenameBody,
  RenamedSchema,
  RequiredPathQuery,
  UploadedSchema,
  UploadQuery,
  WriteBody,
  WrittenSchema,
} from './schema.js';
import { listFiles, makeFolder, readFile, removePath, renamePath, uploadFile, writeFile } from './service.js';
import type { WorldsParts } from '../volumes/index.js';
import type { AppDeps } from '../../../http/env.js';

const SMALL_UPLOAD_MAX_BYTES = 32 * 1024 * 1024;

const fileErrors = {
  400: errorAnswer('bad_request or bad_path'),
  403: errorAnswer('not the owner or staff'),
  404: errorAnswer('no such server, or nothing at the path'),
  409: errorAnswer('not_stopped, maintenance_in_progress (a job holds the world, or the write waited 5 s behind others: Retry-After), file_exists'),
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
    409: errorAnswer('not_stopped, maintenance_in_progress (a job holds the world, or the write waited 5 s behind others: Retry-After), file_changed or file_exists'),
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
      409: errorAnswer('not_stopped, maintenance_in_progress (a job holds the world, or the write waited 5 s behind others: Retry-After) or file_exists'),
      413: errorAnswer('too_large: over small_upload_max_bytes, or over 256 KiB on Kubernetes'),
    },
  },
  { rawBody: { limit: { name: 'small_upload_max_bytes', bytes: SMALL_UPLOAD_MAX_BYTES }, digest: 'optional' } },
);

/** File routes of the external face (owner or staff; the server must be stopped). */
export function externalFileRoutes(deps: AppDeps & WorldsParts & ServersParts) {
  return createRouter()
    .openapi(list, async (c) => {
      const { name } = c.req.valid('param');
      return c.json(await listFiles(deps, { serverName: name, caller: c.var.session, path: c.req.valid('query').path }), 200);
    })
    .openapi(read, async (c) => {
      const { name } = c.req.valid('param');
      return c.json(await readFile(deps, { serverName: name, caller: c.var.session, path: c.req.valid('query').path }), 200);
    })
    .openapi(write, async (c) => {
      const { name } = c.req.valid('param');
      const { content, content_sha256: contentSha256, expect_sha256: expectSha256, create_only: createOnly } = c.req.valid('json');
      const target = { serverName: name, caller: c.var.session, path: c.req.valid('query').path };
      return c.json(await writeFile(deps, { ...target, content, contentSha256, expectSha256, createOnly }), 200);
    })
    .openapi(remove, async (c) => {
      const { name } = c.req.valid('param');
      return c.json(await removePath(deps, { serverName: name, caller: c.var.session, path: c.req.valid('query').path }), 200);
    })
    .openapi(mkdirRoute, async (c) => {
      const { name } = c.req.valid('param');
      return c.json(await makeFolder(deps, { serverName: name, caller: c.var.session, path: c.req.valid('query').path }), 200);
    })
    .openapi(renameRoute, async (c) => {
      const { name } = c.req.valid('param');
      const to = c.req.valid('json').to;
      return c.json(await renamePath(deps, { serverName: name, caller: c.var.session, path: c.req.valid('query').path, to }), 200);
    })
    .openapi(upload, async (c) => {
      const { path, overwrite } = c.req.valid('query');
      const body = rawBodyOf(c);
      const { name } = c.req.valid('param');
      const stored = await uploadFile(deps, { serverName: name, caller: c.var.session, path, body, overwrite: overwrite === 'true' });
      return c.json({ ...stored, sha256: body.sha256 }, 200);
    });
}
