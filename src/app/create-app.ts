import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv, Face } from '../http/env.js';
import { handleError, notFoundHandler } from '../http/error-handler.js';
import { behindFrontDoor, routeStep } from '../http/pipeline.js';
import type { RouteTable } from '../http/route.js';

/**
 * One face's app. Every route is mounted as one handler behind the face's front door
 * (src/http/pipeline.ts): request id, answer headers, cross-site guard, access, body rules,
 * validation, the envelope for every error, metrics and the log line. Features only add routes.
 */
export class FaceApp extends OpenAPIHono<AppEnv> {
  constructor(
    readonly face: Face,
    readonly deps: AppDeps,
  ) {
    super();
    this.notFound(behindFrontDoor(face, deps, 'unmatched', notFoundHandler(this)));
    // Failures inside a route are answered by its pipeline; this catches anything outside one.
    this.onError(handleError);
  }

  addRoutes(table: RouteTable): this {
    for (const entry of table.entries) {
      const { hide, ...documented } = entry.route as typeof entry.route & { hide?: boolean };
      if (!hide) this.openAPIRegistry.registerPath(documented);
      const path = entry.route.path.replaceAll(/\/{(.+?)}/g, '/:$1');
      const step = routeStep(entry);
      this.on(entry.route.method.toUpperCase(), path, behindFrontDoor(this.face, this.deps, path, step, { streamed: entry.rules.streamed, hotRead: entry.rules.hotRead }));
    }
    return this;
  }
}

export function createApp(face: Face, deps: AppDeps): FaceApp {
  return new FaceApp(face, deps);
}
