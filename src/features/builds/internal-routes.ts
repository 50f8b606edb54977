import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import type { Access } from '../../http/tiers.js';
import { BuildIdParam, BuildStatusBody, ScanSummarySchema, ScanUploadBody } from './schema.js';
import { moveBuild, recordScan } from './service.js';
import { contextAnswer, contextResponse } from './submissions/context-response.js';
import { SubmissionIdParam } from './submissions/schema.js';
import { openBuildContext, openContext } from './submissions/service.js';
import type { BuildsParts } from './runner.js';
import type { AppDeps } from '../../http/env.js';

const BUILD: Access = { tier: 'service', callers: ['build'] };

const submissionContext = defineRoute(BUILD, {
  method: 'get',
  path: '/api/v1/internal/submissions/{id}/context',
  summary: 'A submission’s stored context tarball, verbatim',
  request: { params: SubmissionIdParam },
  responses: { 200: contextAnswer('the tarball'), 404: errorAnswer('not_found'), 503: errorAnswer('unavailable: no context store') },
}, { streamed: true });

const buildContext = defineRoute(BUILD, {
  method: 'get',
  path: '/api/v1/internal/builds/{id}/context',
  summary: 'The context a build is pinned to',
  request: { params: BuildIdParam },
  responses: { 200: contextAnswer('the tarball'), 404: errorAnswer('not_found: no such build, or it has no context'), 503: errorAnswer('unavailable') },
}, { streamed: true });

const status = defineRoute(BUILD, {
  method: 'post',
  path: '/api/v1/internal/builds/{id}/status',
  summary: 'The build job reports its status (only legal moves)',
  request: { params: BuildIdParam, ...jsonBody(BuildStatusBody) },
  responses: {
    204: { description: 'recorded' },
    404: errorAnswer('not_found'),
    409: errorAnswer('conflict: an illegal move, or success without an unblocked scan'),
  },
});

const scan = defineRoute(BUILD, {
  method: 'post',
  path: '/api/v1/internal/builds/{id}/scan',
  summary: 'The scanner’s report (and SBOM) through the scan gate; the job pushes only when not blocked',
  request: { params: BuildIdParam, ...jsonBody(ScanUploadBody) },
  responses: {
    200: json(ScanSummarySchema, 'the verdict'),
    400: errorAnswer('bad_request: not a Trivy JSON report'),
    404: errorAnswer('not_found'),
    409: errorAnswer('conflict: the build is not building, or was already scanned'),
  },
});

export function internalBuildRoutes(deps: AppDeps & BuildsParts) {
  return createRouter()
    .openapi(submissionContext, async (c) => contextResponse(c, await openContext(deps, 'all', c.req.valid('param').id)) as never)
    .openapi(buildContext, async (c) => contextResponse(c, await openBuildContext(deps, c.req.valid('param').id)) as never)
    .openapi(status, async (c) => {
      const body = c.req.valid('json');
      await moveBuild(deps, c.req.valid('param').id, body.status, { error: body.error, logRef: body.log_ref });
      return c.body(null, 204);
    })
    .openapi(scan, async (c) => {
      const body = c.req.valid('json');
      return c.json(await recordScan(deps, c.req.valid('param').id, { report: body.report, sbom: body.sbom }), 200);
    });
}
