import { behindFrontDoor } from '../http/pipeline.js';
import { createWeb, PAGE_PATHS } from '../web/index.js';
import type { FaceApp } from './create-app.js';

/**
 * The panel and the operator console on the external face: each page path behind the face's front
 * door (request id, headers, the cross-site guard for the forms, metrics, the log line), answered by
 * src/web, which calls this same app's API routes in-process as the visitor.
 */
export function mountPages(app: FaceApp): void {
  const web = createWeb({ config: app.deps.config, fetchApi: (request, env) => app.fetch(request, env) });
  for (const path of PAGE_PATHS) {
    app.on(['GET', 'HEAD', 'POST'], path, behindFrontDoor(app.face, app.deps, path, (c) => web.fetch(c.req.raw, c.env)));
  }
}
