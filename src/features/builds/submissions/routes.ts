import { z } from '@hono/zod-openapi';
import { rawBodyOf } from '../../../http/raw-body.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody, rawBody } from '../../../http/route.js';
import { contextAnswer, contextResponse } from './context-response.js';
import {
  ApproveSubmissionBody,
  ContextUploadProgressSchema,
  CreateSubmissionBody,
  RejectSubmissionBody,
  SubmissionIdParam,
  SubmissionListQuery,
  SubmissionPageSchema,
  SubmissionSchema,
  UploadOffsetQuery,
} from './schema.js';
import {
  approveSubmission,
  createSubmission,
  deleteSubmission,
  listSubmissions,
  openContext,
  readSubmission,
  rejectSubmission,
} from './service.js';
import { readUploadLimits } from './settings.js';
import { completeUpload, partLimit, putPart, uploadProgress, uploadWhole } from './upload.js';
import type { BuildsParts } from '../runner.js';
import type { AppDeps } from '../../../http/env.js';

const APP = { tier: 'app' } as const;
const ADMIN = { tier: 'admin' } as const;
const byId = { params: SubmissionIdParam };
/** The panel sends parts as octet-stream; a whole context is gzip. */
const CONTEXT_MEDIA = ['application/gzip', 'application/x-gzip', 'application/octet-stream'];

const uploadErrors = {
  400: errorAnswer('bad_request (Content-Digest missing or malformed), digest_mismatch'),
  404: errorAnswer('not_found'),
  409: errorAnswer('conflict (not pending_review), upload_offset_mismatch, upload_busy'),
  413: errorAnswer('too_large: over part_max_bytes or context_max_bytes'),
  415: errorAnswer('unsupported_media_type'),
  503: errorAnswer('unavailable: no context store'),
  507: errorAnswer('uploads_full'),
};

const create = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/me/submissions',
  summary: 'Submit a modpack (only its display name; the context is uploaded next)',
  request: jsonBody(CreateSubmissionBody),
  responses: { 201: json(SubmissionSchema, 'pending review') },
});

const mine = defineRoute(APP, {
  method: 'get',
  path: '/api/v1/me/submissions',
  summary: 'My submissions, newest first',
  request: { query: SubmissionListQuery },
  responses: { 200: json(SubmissionPageSchema, 'one page with counts per status') },
});

const limits = defineRoute(APP, {
  method: 'get',
  path: '/api/v1/me/submissions/limits',
  summary: 'How large a context may be',
  responses: { 200: json(z.object({ max_context_bytes: z.number().int() }), 'the limit') },
});

const readMine = defineRoute(APP, {
  method: 'get',
  path: '/api/v1/me/submissions/{id}',
  summary: 'One of my submissions',
  request: byId,
  responses: { 200: json(SubmissionSchema, 'the submission'), 404: errorAnswer('not_found') },
});

const withdraw = defineRoute(APP, {
  method: 'delete',
  path: '/api/v1/me/submissions/{id}',
  summary: 'Withdraw a submission still pending review',
  request: byId,
  responses: { 200: json(SubmissionSchema, 'withdrawn'), 404: errorAnswer('not_found'), 409: errorAnswer('conflict: already reviewed') },
});

const uploadOnce = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/me/submissions/{id}/context',
  summary: 'Upload the whole gzip context in one request',
  request: { ...byId, ...rawBody(...CONTEXT_MEDIA) },
  responses: { 200: json(SubmissionSchema, 'stored, with context_sha256'), ...uploadErrors },
}, {
  rawBody: { limit: { name: 'context_max_bytes', bytes: async (c) => (await readUploadLimits(c.var.deps.database.db)).contextMaxBytes } },
});

const progress = defineRoute(APP, {
  method: 'get',
  path: '/api/v1/me/submissions/{id}/context/upload',
  summary: 'Where a context upload in parts stands (the next part starts at received)',
  request: byId,
  responses: { 200: json(ContextUploadProgressSchema, 'the progress'), 404: errorAnswer('not_found') },
});

const part = defineRoute(APP, {
  method: 'put',
  path: '/api/v1/me/submissions/{id}/context/upload',
  summary: 'Stage one part at offset (which must equal received; 0 starts over), with its Content-Digest',
  request: { ...byId, query: UploadOffsetQuery, ...rawBody(...CONTEXT_MEDIA) },
  responses: { 200: json(ContextUploadProgressSchema, 'staged'), ...uploadErrors },
}, {
  rawBody: {
    limit: { name: 'part_max_bytes (or the room left under context_max_bytes)', bytes: (c) => partLimit(c.var.deps.database.db, Number(c.req.query('offset'))) },
    digest: 'required',
  },
});

const complete = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/me/submissions/{id}/context/upload/complete',
  summary: 'Store the staged parts as the context',
  request: byId,
  responses: {
    200: json(SubmissionSchema, 'stored, with context_sha256'),
    400: errorAnswer('bad_request: nothing staged'),
    404: errorAnswer('not_found'),
    409: errorAnswer('conflict, upload_busy'),
  },
});

const all = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/submissions',
  summary: 'Every user’s submissions, newest first',
  request: { query: SubmissionListQuery },
  responses: { 200: json(SubmissionPageSchema, 'one page with counts per status') },
});

const approve = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/submissions/{id}/approve',
  summary: 'Approve the context with this digest; the platform derives the image and hands a build off',
  request: { ...byId, ...jsonBody(ApproveSubmissionBody) },
  responses: {
    200: json(SubmissionSchema, 'approved (build_id once the build was handed off)'),
    404: errorAnswer('not_found'),
    409: errorAnswer('conflict: digest mismatch, no context, or not pending review'),
  },
});

const reject = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/submissions/{id}/reject',
  summary: 'Reject with a reason',
  request: { ...byId, ...jsonBody(RejectSubmissionBody) },
  responses: { 200: json(SubmissionSchema, 'rejected'), 404: errorAnswer('not_found'), 409: errorAnswer('conflict: not pending review') },
});

const remove = defineRoute(ADMIN, {
  method: 'delete',
  path: '/api/v1/submissions/{id}',
  summary: 'Delete a submission and its context',
  request: byId,
  responses: { 200: json(SubmissionSchema, 'deleted'), 404: errorAnswer('not_found') },
});

const download = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/submissions/{id}/context',
  summary: 'Download the stored context',
  request: byId,
  responses: { 200: contextAnswer('the tarball'), 404: errorAnswer('not_found'), 503: errorAnswer('unavailable') },
}, { streamed: true });

export function submissionRoutes(deps: AppDeps & BuildsParts) {
  return createRouter()
    .openapi(create, async (c) => c.json(await createSubmission(deps, c.var.session.userId, c.req.valid('json').display_name), 201))
    .openapi(mine, async (c) => c.json(await listSubmissions(deps.database.db, { userId: c.var.session.userId }, c.req.valid('query')), 200))
    .openapi(limits, async (c) => c.json({ max_context_bytes: (await readUploadLimits(deps.database.db)).contextMaxBytes }, 200))
    .openapi(readMine, async (c) => c.json(await readSubmission(deps.database.db, { userId: c.var.session.userId }, c.req.valid('param').id), 200))
    .openapi(withdraw, async (c) => c.json(await deleteSubmission(deps, { userId: c.var.session.userId }, c.req.valid('param').id), 200))
    .openapi(uploadOnce, async (c) => {
      return c.json(await uploadWhole(deps, c.var.session.userId, c.req.valid('param').id, rawBodyOf(c)), 200);
    })
    .openapi(progress, async (c) => c.json(await uploadProgress(deps, c.var.session.userId, c.req.valid('param').id), 200))
    .openapi(part, async (c) => {
      const { offset } = c.req.valid('query');
      return c.json(await putPart(deps, c.var.session.userId, c.req.valid('param').id, offset, rawBodyOf(c)), 200);
    })
    .openapi(complete, async (c) => c.json(await completeUpload(deps, c.var.session.userId, c.req.valid('param').id), 200))
    .openapi(all, async (c) => c.json(await listSubmissions(deps.database.db, 'all', c.req.valid('query')), 200))
    .openapi(approve, async (c) =>
      c.json(await approveSubmission(deps, c.var.session.userId, c.req.valid('param').id, c.req.valid('json').expected_digest), 200),
    )
    .openapi(reject, async (c) =>
      c.json(await rejectSubmission(deps, c.var.session.userId, c.req.valid('param').id, c.req.valid('json').reason), 200),
    )
    .openapi(remove, async (c) => c.json(await deleteSubmission(deps, 'all', c.req.valid('param').id), 200))
    .openapi(download, async (c) => contextResponse(c, await openContext(deps, 'all', c.req.valid('param').id)) as never);
}
