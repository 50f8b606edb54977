import { OpenAPIHono } from '@hono/zod-openapi';
import { requestId } from 'hono/request-id';
import type { Deps } from '../deps.js';
import { crossSiteGuard } from '../http/cross-site.js';
import type { AppEnv, Face } from '../http/env.js';
import { handleError, notFoundHandler } from '../http/error-handler.js';
import { observe } from '../http/observe.js';
import { validationHook } from '../http/route.js';
import { securityHeaders } from '../http/security-headers.js';

/** Inbound ids we keep: 1 to 128 of letters, digits, `-`, `_` and `=` (anything else is replaced). */
const REQUEST_ID_MAX = 128;

/**
 * One face's app with the shared stack: request id, observation (log line and metrics),
 * security headers, the cross-site guard (before any authentication), the envelope for every error.
 * Features only add routes.
 */
export function createApp(face: Face, deps: Deps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(async (c, next) => {
    c.set('deps', deps);
    c.set('face', face);
    await next();
  });
  app.use(requestId({ limitLength: REQUEST_ID_MAX }));
  app.use(observe);
  app.use(securityHeaders);
  app.use(crossSiteGuard);
  app.onError(handleError);
  app.notFound(notFoundHandler(app));
  return app;
}
