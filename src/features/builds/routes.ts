import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { LastEventIdHeader } from '../console/index.js';
import { openBuildLog } from './log-stream.js';
import { BuildIdParam, BuildListQuery, BuildListSchema, BuildScanSchema, BuildSchema, CreateBuildBody } from './schema.js';
import { cancelBuild, createBuild, getBuild, getScan, getScanDocument, listBuilds } from './service.js';
import type { BuildsParts } from './runner.js';
import type { AppDeps } from '../../http/env.js';

const ADMIN = { tier: 'admin' } as const;

const create = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/images/build',
  summary: 'Start an image build (a Dockerfile, and optionally an approved submission’s context)',
  request: jsonBody(CreateBuildBody),
  responses: {
    202: json(BuildSchema, 'pending, handed to the builder'),
    400: errorAnswer('bad_request (no dockerfile nor context_ref, or context_ref names no approved submission)'),
    503: errorAnswer('unavailable: no builder, or it did not take the build'),
  },
});

const list = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/images/build',
  summary: 'Builds, newest first',
  request: { query: BuildListQuery },
  responses: { 200: json(BuildListSchema, 'one page') },
});

const get = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/images/build/{id}',
  summary: 'One build',
  request: { params: BuildIdParam },
  responses: { 200: json(BuildSchema, 'the build'), 404: errorAnswer('not_found') },
});

const cancel = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/images/build/{id}/cancel',
  summary: 'Cancel a pending or running build',
  request: { params: BuildIdParam },
  responses: { 202: json(BuildSchema, 'cancelled'), 404: errorAnswer('not_found'), 409: errorAnswer('conflict: already terminal') },
});

const logs = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/images/build/{id}/logs',
  summary: 'The build log as Server-Sent Events',
  description:
    'One event per stored line: `id: <unix second>.<six digits>` (the line’s second and its number within it, the same on every ' +
    'replica), `data:` the line. A reconnect with `Last-Event-ID` within one hour resumes exactly after that line (a whole unix ' +
    'second: from that second’s first line); older or none: the whole log.',
  request: { params: BuildIdParam, headers: z.strictObject({ 'last-event-id': LastEventIdHeader.optional() }) },
  responses: {
    200: { description: 'one event per log line', content: { 'text/event-stream': { schema: z.string() } } },
    400: errorAnswer('bad_request: a malformed Last-Event-ID'),
    404: errorAnswer('not_found'),
    429: errorAnswer('rate_limited: the account has 8 event streams open'),
  },
}, { streamed: true });

const scan = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/images/build/{id}/scan',
  summary: 'The scan gate’s verdict on a build',
  request: { params: BuildIdParam },
  responses: { 200: json(BuildScanSchema, 'the scan'), 404: errorAnswer('not_found: not scanned') },
});

const anyJson = z.record(z.string(), z.unknown());
const report = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/images/build/{id}/scan/report',
  summary: 'The scanner’s full JSON report (Trivy format)',
  request: { params: BuildIdParam },
  responses: { 200: json(anyJson, 'the report'), 404: errorAnswer('not_found: not scanned, or the report was omitted') },
});

const sbom = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/images/build/{id}/sbom',
  summary: 'The image’s CycloneDX SBOM',
  request: { params: BuildIdParam },
  responses: { 200: json(anyJson, 'the SBOM'), 404: errorAnswer('not_found: not scanned, or the SBOM was omitted') },
});

const EVENT_STREAM_HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' };

export function buildRoutes(deps: AppDeps & BuildsParts) {
  return createRouter()
    .openapi(create, async (c) => {
      const body = c.req.valid('json');
      const build = await createBuild(deps, {
        imageRef: body.image_ref,
        requestedBy: c.var.session.userId,
        dockerfile: body.dockerfile,
        contextRef: body.context_ref,
        baseImage: body.base_image,
      });
      return c.json(build, 202);
    })
    .openapi(list, async (c) => c.json(await listBuilds(deps.database.db, c.req.valid('query')), 200))
    .openapi(get, async (c) => c.json(await getBuild(deps.database.db, c.req.valid('param').id), 200))
    .openapi(cancel, async (c) => c.json(await cancelBuild(deps, c.req.valid('param').id), 202))
    .openapi(logs, async (c) => {
      const { session } = c.var;
      const events = await openBuildLog(deps, {
        buildId: c.req.valid('param').id,
        userId: session.userId,
        lastEventId: c.req.valid('header')['last-event-id'],
        // The request's own cookie, read again: a session revoked meanwhile ends the stream.
        stillSignedIn: async () => {
          await deps.sessions?.authenticate(c, { tier: 'admin', setupAllowed: false });
          return deps.sessions !== undefined;
        },
      });
      return c.body(events, 200, EVENT_STREAM_HEADERS) as never;
    })
    .openapi(scan, async (c) => c.json(await getScan(deps.database.db, c.req.valid('param').id), 200))
    .openapi(report, async (c) => c.json(await getScanDocument(deps.database.db, c.req.valid('param').id, 'report'), 200))
    .openapi(sbom, async (c) => c.json(await getScanDocument(deps.database.db, c.req.valid('param').id, 'sbom'), 200));
}
