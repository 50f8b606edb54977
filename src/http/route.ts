import { createRoute, z, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.js';
import { ApiError } from './errors.js';
import type { Access } from './tiers.js';

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'bad_request' }),
      message: z.string(),
      request_id: z.string().optional(),
    }),
  })
  .openapi('Error');

/** A JSON response entry of an OpenAPI route. */
export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** An error answer (the envelope), documented by the codes it carries. */
export const errorAnswer = (description: string) => json(ErrorEnvelopeSchema, description);

/** A JSON request body (required unless the route says otherwise). */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({ body: { content: { 'application/json': { schema } } } });

/** The common answers each tier can give, so every operation documents them. */
function commonResponses(access: Access, hasJsonBody: boolean): RouteConfig['responses'] {
  const responses: RouteConfig['responses'] = { 500: errorAnswer('internal') };
  if (hasJsonBody) {
    responses[400] = errorAnswer('bad_request');
    responses[413] = errorAnswer('too_large');
    responses[415] = errorAnswer('unsupported_media_type');
  }
  if (access.tier !== 'public') responses[401] = errorAnswer('unauthorized');
  if (access.tier === 'service') responses[403] = errorAnswer('wrong_caller');
  if (access.tier === 'app' || access.tier === 'admin') {
    responses[403] = errorAnswer('forbidden, setup_required or cross_site');
  }
  return responses;
}

/** How a route treats a request that declares a body. */
export type DeclaredBody =
  /** JSON rules: 415 unless JSON, 413 over 1 MiB, then the body schema (if the route has one). */
  | 'json'
  /** The route reads a body of its own media type. */
  | 'raw'
  /** Refused before anything else reads it, by the route's own answer. */
  | ((c: Context<AppEnv>) => Response);

/** What the request pipeline (pipeline.ts) needs of a route beyond its OpenAPI definition. */
export interface RouteRules {
  access: Access;
  declaredBody: DeclaredBody;
  /** The route's own steps (rate limits), after access and the body rules, before validation. */
  middleware: MiddlewareHandler<AppEnv>[];
}

const RULES = Symbol('felis.routeRules');

export function rulesOf(route: RouteConfig): RouteRules {
  const rules = (route as { [RULES]?: RouteRules })[RULES];
  if (!rules) throw new Error(`${route.method} ${route.path} was not declared with defineRoute`);
  return rules;
}

/**
 * Declares an operation: its access (tier and callers) beside its OpenAPI definition, and how a
 * declared body is treated. The pipeline enforces them in this order: access, body rules, the
 * route's own middleware, then zod validation of path, query and body.
 */
export function defineRoute<P extends string, R extends Omit<RouteConfig, 'path'> & { path: P }>(
  access: Access,
  config: R,
  options: { onDeclaredBody?: (c: Context<AppEnv>) => Response } = {},
) {
  const content = config.request?.body?.content ?? {};
  const hasJsonBody = 'application/json' in content;
  const isRawBody = Object.keys(content).length > 0 && !hasJsonBody;
  if (config.request?.headers || config.request?.cookies) {
    throw new Error(`${config.path}: header and cookie schemas are not validated by the pipeline`);
  }
  const { middleware, ...rest } = config;
  const route = createRoute({
    ...rest,
    request: config.request && {
      ...config.request,
      body: config.request.body && { required: true, ...config.request.body },
    },
    responses: { ...commonResponses(access, hasJsonBody), ...config.responses },
    'x-felis-tier': access.tier,
    ...(access.tier === 'service' ? { 'x-felis-callers': access.callers } : {}),
  } as unknown as R);
  const rules: RouteRules = {
    access,
    declaredBody: options.onDeclaredBody ?? (isRawBody ? 'raw' : 'json'),
    middleware: middleware === undefined ? [] : ([middleware].flat() as MiddlewareHandler<AppEnv>[]),
  };
  // Not enumerable: the OpenAPI registry copies routes with spread and must not see it.
  Object.defineProperty(route, RULES, { value: rules });
  return route;
}

export interface RouteEntry {
  route: RouteConfig;
  handler: (c: Context<AppEnv>) => Response | Promise<Response>;
}

/**
 * One feature's routes on one face: definitions and handlers, bound to a face (its deps, its
 * pipeline) only when the face app mounts them (create-app.ts).
 */
export class RouteTable {
  readonly entries: RouteEntry[] = [];

  openapi<R extends RouteConfig>(route: R, handler: RouteHandler<R, AppEnv>): this {
    rulesOf(route);
    const run = handler as unknown as (c: Context<AppEnv>, next: () => Promise<void>) => Response | Promise<Response>;
    this.entries.push({ route, handler: (c) => run(c, noNext) });
    return this;
  }

  /** Adds another table's routes (feature tables made of smaller ones). */
  include(other: RouteTable): this {
    this.entries.push(...other.entries);
    return this;
  }
}

const noNext = async () => {
  throw new Error('a route handler has no next step');
};

export function createRouter(): RouteTable {
  return new RouteTable();
}
