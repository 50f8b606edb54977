import type { Context } from 'hono';
import type { AppDeps, AppEnv } from '../../../http/env.js';
import { rawBodyOf } from '../../../http/raw-body.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody, rawBody } from '../../../http/route.js';
import { ServerNameParam, type ServersParts } from '../../servers/index.js';
import {
  BeginUploadBody,
  FileOpBody,
  FileOpStartedSchema,
  FileOpsSchema,
  UploadIdParams,
  UploadOffsetQuery,
  UploadPathQuery,
  UploadSessionListSchema,
  UploadSessionSchema,
} from './schema.js';
import { appendUploadPart, beginWorldUpload, cancelUpload, commitUpload, listWorldFileOps, listWorldUploads, partLimit, startUnzip, uploadStatus } from './service.js';
import type { WorldsParts } from '../volumes/index.js';

const APP = { tier: 'app' } as const;
const base = '/api/v1/servers/{name}/files';

const gateErrors = {
  400: errorAnswer('bad_request'),
  403: errorAnswer('not the owner or staff'),
  404: errorAnswer('not_found (no such server) or upload_not_found (not your upload on this server, or swept)'),
  503: errorAnswer('unavailable: the world volumes cannot be reached from this service'),
};

const begin = defineRoute(APP, {
  method: 'post',
  path: `${base}/uploads`,
  summary: 'Begin an upload session for a large file (the room for all of it is reserved now)',
  request: { params: ServerNameParam, query: UploadPathQuery, ...jsonBody(BeginUploadBody) },
  responses: {
    201: json(UploadSessionSchema, 'the session'),
    ...gateErrors,
    400: errorAnswer('bad_request or bad_path'),
    409: errorAnswer('not_stopped'),
    413: errorAnswer('too_large: the file alone is over upload_reserved_bytes_per_user'),
    429: errorAnswer('too_many_uploads: upload_sessions_per_user open, or upload_reserved_bytes_per_user reserved'),
    507: errorAnswer('uploads_full'),
  },
});

const list = defineRoute(APP, {
  method: 'get',
  path: `${base}/uploads`,
  summary: 'Your own upload sessions on this server that still hold room (every account\'s, for staff), oldest first (to resume or cancel one)',
  request: { params: ServerNameParam },
  responses: { 200: json(UploadSessionListSchema, 'your live sessions'), ...gateErrors },
});

const status = defineRoute(APP, {
  method: 'get',
  path: `${base}/uploads/{id}`,
  summary: 'Where an upload session stands (the next part starts at received)',
  request: { params: UploadIdParams },
  responses: { 200: json(UploadSessionSchema, 'the session'), ...gateErrors },
});

/** A part carries at most part_max_bytes, and no more than the upload still lacks after `offset`. */
const partLimitOf = (c: Context<AppEnv>) => partLimit(c.var.deps, c.var.session?.userId, c.req.param('id') ?? '', Number(c.req.query('offset')));

const part = defineRoute(
  APP,
  {
    method: 'put',
    path: `${base}/uploads/{id}`,
    summary: 'Send one part at offset (which must equal received), Content-Digest verified when sent',
    request: { params: UploadIdParams, query: UploadOffsetQuery, ...rawBody('application/octet-stream') },
    responses: {
      200: json(UploadSessionSchema, 'the part was taken'),
      ...gateErrors,
      400: errorAnswer('bad_request or digest_mismatch (nothing of the part is kept)'),
      409: errorAnswer('upload_offset_mismatch (Upload-Offset says where) or upload_busy'),
      413: errorAnswer('too_large: over part_max_bytes or past the size the upload began with'),
      507: errorAnswer('uploads_full'),
    },
  },
  { rawBody: { limit: { name: 'part_max_bytes (or the bytes the upload still lacks)', bytes: partLimitOf }, digest: 'optional' } },
);

const drop = defineRoute(APP, {
  method: 'delete',
  path: `${base}/uploads/{id}`,
  summary: 'Cancel an upload session and free its room (your own; any account\'s, for staff)',
  request: { params: UploadIdParams },
  responses: { 204: { description: 'cancelled' }, ...gateErrors, 409: errorAnswer('upload_busy') },
});

const commit = defineRoute(APP, {
  method: 'post',
  path: `${base}/uploads/{id}/commit`,
  summary: 'Land a complete upload at its path as a world job (overwrite replaces a file there)',
  request: { params: UploadIdParams, ...jsonBody(FileOpBody) },
  responses: {
    202: json(FileOpStartedSchema, 'the op; GET …/files/ops says how it ends (file_exists without overwrite)'),
    ...gateErrors,
    409: errorAnswer('upload_incomplete, upload_busy, not_stopped or maintenance_in_progress'),
  },
});

const unzip = defineRoute(APP, {
  method: 'post',
  path: `${base}/unzip`,
  summary: 'Extract a .zip of the world into its folder as a world job, all or nothing',
  request: { params: ServerNameParam, query: UploadPathQuery, ...jsonBody(FileOpBody) },
  responses: {
    202: json(FileOpStartedSchema, 'the op; GET …/files/ops says how it ends'),
    ...gateErrors,
    400: errorAnswer('bad_request or bad_path (not a .zip)'),
    409: errorAnswer('not_stopped or maintenance_in_progress'),
  },
});

const ops = defineRoute(APP, {
  method: 'get',
  path: `${base}/ops`,
  summary: 'The server’s uploads and unzips: those running and those that ended in the last half hour',
  request: { params: ServerNameParam },
  responses: { 200: json(FileOpsSchema, 'newest first'), ...gateErrors },
});

/** Upload sessions, unzip and the ops list (owner or staff; beginning, committing and unzipping need a stopped server). */
export function externalUploadRoutes(deps: AppDeps & WorldsParts & ServersParts) {
  return createRouter()
    .openapi(begin, async (c) => {
      const { name } = c.req.valid('param');
      const view = await beginWorldUpload(deps, { serverName: name, caller: c.var.session, path: c.req.valid('query').path, size: c.req.valid('json').size });
      return c.json(view, 201);
    })
    .openapi(list, async (c) => {
      const { name } = c.req.valid('param');
      return c.json({ uploads: await listWorldUploads(deps, name, c.var.session) }, 200);
    })
    .openapi(status, async (c) => {
      const { name, id } = c.req.valid('param');
      return c.json(await uploadStatus(deps, { serverName: name, caller: c.var.session, id }), 200);
    })
    .openapi(part, async (c) => {
      const { name, id } = c.req.valid('param');
      const view = await appendUploadPart(deps, { serverName: name, caller: c.var.session, id, offset: c.req.valid('query').offset, body: rawBodyOf(c) });
      return c.json(view, 200);
    })
    .openapi(drop, async (c) => {
      const { name, id } = c.req.valid('param');
      await cancelUpload(deps, { serverName: name, caller: c.var.session, id });
      return c.body(null, 204);
    })
    .openapi(commit, async (c) => {
      const { name, id } = c.req.valid('param');
      const op = await commitUpload(deps, { serverName: name, caller: c.var.session, id, overwrite: c.req.valid('json').overwrite ?? false });
      return c.json({ op }, 202);
    })
    .openapi(unzip, async (c) => {
      const { name } = c.req.valid('param');
      const op = await startUnzip(deps, { serverName: name, caller: c.var.session, path: c.req.valid('query').path, overwrite: c.req.valid('json').overwrite ?? false });
      return c.json({ op }, 202);
    })
    .openapi(ops, async (c) => {
      const { name } = c.req.valid('param');
      return c.json({ ops: await listWorldFileOps(deps, name, c.var.session) }, 200);
    });
}
