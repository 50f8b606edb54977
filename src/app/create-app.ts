import { OpenAPIHono } from '@hono/zod-openapi';
import type { Deps } from '../deps.js';
import type { AppEnv, Face } from '../http/env.js';
import { handleError, notFoundHandler } from '../http/error-handler.js';
import { frontDoor } from '../http/front-door.js';
import { validationHook } from '../http/route.js';

/**
 * One face's app with the shared stack (src/http/front-door.ts): request id, observation (log
 * line and metrics), security headers, the cross-site guard (before any authentication), and the
 * envelope for every error. Features only add routes.
 */
export function createApp(face: Face, deps: Deps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(frontDoor(face, deps));
  app.onError(handleError);
  app.notFound(notFoundHandler(app));
  return app;
}
