import { statfs } from 'node:fs/promises';
import type { Context } from 'hono';
import { and, eq } from 'drizzle-orm';
import { worldUploadSessions } from '../../db/schema/world-files.js';
import type { AppEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { rawBodyOf } from '../../http/raw-body.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody, rawBody } from '../../http/route.js';
import { ServerNameParam } from '../servers/index.js';
import { localFolders, requireStopped, requireWorld } from './access.js';
import { FileOpFailure, listFileOps, startFileOp } from './file-ops.js';
import { uploadWorldFile, worldPath } from './files.js';
import { worldPathSegments } from './paths.js';
import { recoverWorldFolder } from './restore.js';
import { unzipInWorld } from './unzip.js';
import {
  appendPart,
  beginUpload,
  claimForCommit,
  dropUpload,
  findSession,
  finishUpload,
  sessionView,
  stagedBytes,
  stagedFile,
} from './upload-sessions.js';
import { uploadSetting } from './upload-settings.js';
import {
  BeginUploadBody,
  FileOpBody,
  FileOpStartedSchema,
  FileOpsSchema,
  UploadIdParams,
  UploadOffsetQuery,
  UploadPathQuery,
  UploadSessionSchema,
} from './uploads-schema.js';
import { isUuid } from '../../lib/uuid.js';

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
    429: errorAnswer('too_many_uploads'),
    507: errorAnswer('uploads_full'),
  },
});

const status = defineRoute(APP, {
  method: 'get',
  path: `${base}/uploads/{id}`,
  summary: 'Where an upload session stands (the next part starts at received)',
  request: { params: UploadIdParams },
  responses: { 200: json(UploadSessionSchema, 'the session'), ...gateErrors },
});

/** A part carries at most part_max_bytes, and no more than the upload still lacks after `offset`. */
async function partLimit(c: Context<AppEnv>): Promise<number> {
  const { db } = c.var.deps.database;
  const partMax = await uploadSetting(db, 'partMaxBytes');
  const id = c.req.param('id') ?? '';
  const offset = Number(c.req.query('offset'));
  if (!isUuid(id) || !c.var.session || !Number.isSafeInteger(offset) || offset < 0) return partMax;
  const [row] = await db
    .select({ size: worldUploadSessions.size })
    .from(worldUploadSessions)
    .where(and(eq(worldUploadSessions.id, id), eq(worldUploadSessions.userId, c.var.session.userId)));
  return row ? Math.max(0, Math.min(partMax, row.size - offset)) : partMax;
}

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
  { rawBody: { limit: { name: 'part_max_bytes (or the bytes the upload still lacks)', bytes: partLimit }, digest: 'optional' } },
);

const drop = defineRoute(APP, {
  method: 'delete',
  path: `${base}/uploads/{id}`,
  summary: 'Cancel an upload session and free its room',
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
export function externalUploadRoutes() {
  return createRouter()
    .openapi(begin, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const { name } = c.req.valid('param');
      await requireWorld(deps, name, session);
      const folders = localFolders(deps);
      await requireStopped(deps, name);
      const { segments, shown } = await worldPath(await folders.folder(name), c.req.valid('query').path);
      if (segments.length === 0) throw new DomainError('bad_path', 'The path must name a file inside the world folder.');
      const row = await beginUpload(deps, session.userId, name, shown, c.req.valid('json').size);
      return c.json(await sessionView(deps.database.db, row), 201);
    })
    .openapi(status, async (c) => {
      const { name, id } = c.req.valid('param');
      await requireWorld(c.var.deps, name, c.var.session);
      const row = await findSession(c.var.deps, c.var.session.userId, name, id);
      return c.json(await sessionView(c.var.deps.database.db, row), 200);
    })
    .openapi(part, async (c) => {
      const { name, id } = c.req.valid('param');
      await requireWorld(c.var.deps, name, c.var.session);
      const row = await findSession(c.var.deps, c.var.session.userId, name, id);
      const updated = await appendPart(c.var.deps, row, c.req.valid('query').offset, rawBodyOf(c));
      return c.json(await sessionView(c.var.deps.database.db, updated), 200);
    })
    .openapi(drop, async (c) => {
      const { name, id } = c.req.valid('param');
      await requireWorld(c.var.deps, name, c.var.session);
      await dropUpload(c.var.deps, await findSession(c.var.deps, c.var.session.userId, name, id));
      return c.body(null, 204);
    })
    .openapi(commit, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const { name, id } = c.req.valid('param');
      const overwrite = c.req.valid('json').overwrite ?? false;
      await requireWorld(deps, name, session);
      const folders = localFolders(deps);
      const row = await findSession(deps, session.userId, name, id);
      const claim = await claimForCommit(deps, row);
      try {
        const op = await startFileOp(
          deps,
          { serverName: name, kind: 'upload', path: row.path, total: row.size, requestedBy: session.userId },
          async ({ jobId, progress }) => {
            await claim.bind(jobId);
            const root = await folders.folder(name);
            await recoverWorldFolder(root);
            const fs = await statfs(root);
            const avail = fs.bavail * fs.bsize;
            if (row.size > avail) {
              throw new FileOpFailure({ code: 'volume_full', need: row.size, avail, message: `The file needs ${row.size} bytes and the world volume has ${avail} free; nothing was changed.` });
            }
            const source = stagedBytes(stagedFile(deps, row.id), row.parts, progress.report);
            const stored = await uploadWorldFile(root, row.path, source, { overwrite });
            await finishUpload(deps, row.id);
            return { files: 1, bytes: stored.size };
          },
        );
        return c.json({ op }, 202);
      } catch (err) {
        await claim.release();
        throw err;
      }
    })
    .openapi(unzip, async (c) => {
      const { deps } = c.var;
      const { name } = c.req.valid('param');
      const { path } = c.req.valid('query');
      const overwrite = c.req.valid('json').overwrite ?? false;
      await requireWorld(deps, name, c.var.session);
      const folders = localFolders(deps);
      const shown = worldPathSegments(path).join('/');
      if (!shown.toLowerCase().endsWith('.zip')) throw new DomainError('bad_path', 'Only a .zip file can be extracted.');
      const limits = { maxBytes: await uploadSetting(deps.database.db, 'unzipMaxBytes'), maxEntries: await uploadSetting(deps.database.db, 'unzipMaxEntries') };
      const op = await startFileOp(
        deps,
        { serverName: name, kind: 'unzip', path: shown, total: 0, requestedBy: c.var.session.userId },
        async ({ jobId, progress }) => {
          const root = await folders.folder(name);
          await recoverWorldFolder(root);
          return unzipInWorld(root, shown, { overwrite, limits, workId: jobId, onTotal: progress.setTotal, onProgress: progress.report });
        },
      );
      return c.json({ op }, 202);
    })
    .openapi(ops, async (c) => {
      const { name } = c.req.valid('param');
      await requireWorld(c.var.deps, name, c.var.session);
      return c.json({ ops: await listFileOps(c.var.deps, name) }, 200);
    });
}
