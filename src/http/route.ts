import { createRoute, z, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv, ServiceEnv, SignedInEnv } from './env.js';
import type { RawBodyOptions, RawBodyRule } from './raw-body.js';
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

/** A raw request body of these media types (route options `rawBody` give its limit; the handler reads `rawBodyOf(c)`). */
export const rawBody = (...mediaTypes: string[]) => ({
  body: {
    content: Object.fromEntries(mediaTypes.map((type) => [type, { schema: z.string().openapi({ format: 'binary' }) }])),
  },
});

/** The common answers each tier can give, so every operation documents them. */
function commonResponses(access: Access, body: 'json' | 'raw' | undefined): RouteConfig['responses'] {
  const responses: RouteConfig['responses'] = { 500: errorAnswer('internal') };
  if (body !== undefined) {
    responses[400] = errorAnswer(body === 'raw' ? 'bad_request or digest_mismatch' : 'bad_request');
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

const SECURITY_OF = {
  service: [{ serviceToken: [] }],
  app: [{ session: [] }, { apiKey: [] }],
  admin: [{ session: [] }],
} as const;

/** How a route treats a request that declares a body. */
export type DeclaredBody =
  /** JSON rules: 415 unless JSON, 413 over 1 MiB, then the body schema (if the route has one). */
  | 'json'
  /** The route reads a raw body of its listed media types (`RouteRules.rawBody`). */
  | 'raw'
  /** Refused before anything else reads it, by the route's own answer. */
  | ((c: Context<AppEnv>) => Response);

/** What the request pipeline (pipeline.ts) needs of a route beyond its OpenAPI definition. */
export interface RouteRules {
  access: Access;
  declaredBody: DeclaredBody;
  /** Raw-body routes: accepted media types, the size limit that applies, the digest rule. */
  rawBody: RawBodyRule | undefined;
  /**
   * The answer is a stream (SSE, a download): its log line and metrics are written when the
   * stream ends, with its length, and it stays out of the latency histogram.
   */
  streamed: boolean;
  /**
   * A read the proxy or the probes make at a high rate (by-host, status, healthz, readyz): the log
   * lines of its successful answers under 100 ms are sampled (LOG_HOT_READS_SAMPLE, access-log.ts).
   */
  hotRead: boolean;
  /** The route's own steps (rate limits), after access and the body rules, before validation. */
  middleware: MiddlewareHandler<AppEnv>[];
}

export interface RouteOptions {
  /** Refuses any declared body with this answer, before anything reads it. */
  onDeclaredBody?: (c: Context<AppEnv>) => Response;
  /** For a body of other media types than JSON (listed in `request.body.content`): its limit and digest rule. */
  rawBody?: RawBodyOptions;
  /** The answer is a stream: see `RouteRules.streamed`. */
  streamed?: boolean;
  /** A GET the proxy or the probes make at a high rate: see `RouteRules.hotRead`. */
  hotRead?: boolean;
}

/** A route as defineRoute makes it: the OpenAPI definition and, as a plain field, its rules. */
export type DefinedRoute<R, A extends Access = Access> = R & { felis: RouteRules & { access: A } };

/**
 * The handler's context of a route of this access: what the tier check guarantees is typed as
 * present (the session of app and admin routes, the caller of service routes).
 */
export type EnvOf<A extends Access> = A extends { tier: 'app' | 'admin' } ? SignedInEnv : A extends { tier: 'service' } ? ServiceEnv : AppEnv;

/**
 * Declares an operation: its access (tier and callers) beside its OpenAPI definition, and how a
 * declared body is treated. The pipeline enforces them in this order: access, body rules, the
 * route's own middleware, then zod validation of path, query, headers and body.
 *
 * A body whose content lists only other media types than JSON is raw: `options.rawBody` gives its
 * limit, the handler reads it with `rawBodyOf(c)` (raw-body.ts). Header schemas name headers in
 * lower case; only the named headers are validated (`.strict()` refuses nothing else).
 */
export function defineRoute<const A extends Access, P extends string, R extends Omit<RouteConfig, 'path'> & { path: P }>(
  access: A,
  config: R,
  options: RouteOptions = {},
): DefinedRoute<R, A> {
  const content = config.request?.body?.content ?? {};
  const mediaTypes = Object.keys(content).map((type) => type.toLowerCase());
  const hasJsonBody = mediaTypes.includes('application/json');
  const isRawBody = mediaTypes.length > 0 && !hasJsonBody;
  if (config.request?.cookies) throw new Error(`${config.path}: cookie schemas are not validated by the pipeline`);
  if (isRawBody !== (options.rawBody !== undefined)) {
    throw new Error(`${config.path}: a raw body (a body of other media types than JSON) needs options.rawBody, and only it`);
  }
  const { middleware, ...rest } = config;
  const route = createRoute({
    ...rest,
    request: config.request && {
      ...config.request,
      body: config.request.body && { required: true, ...config.request.body },
    },
    responses: { ...commonResponses(access, isRawBody ? 'raw' : hasJsonBody ? 'json' : undefined), ...config.responses },
    'x-felis-tier': access.tier,
    ...(access.tier === 'service' ? { 'x-felis-callers': access.callers } : {}),
    // The credentials a tier takes (schemes registered in src/app/openapi.ts): an API key passes the app tier only.
    ...(access.tier === 'public' ? {} : { security: SECURITY_OF[access.tier] }),
  } as unknown as R);
  const felis: RouteRules & { access: A } = {
    access,
    declaredBody: options.onDeclaredBody ?? (isRawBody ? 'raw' : 'json'),
    rawBody: options.rawBody && { mediaTypes, limit: options.rawBody.limit, digest: options.rawBody.digest ?? 'optional' },
    streamed: options.streamed ?? false,
    hotRead: options.hotRead ?? false,
    middleware: middleware === undefined ? [] : ([middleware].flat() as MiddlewareHandler<AppEnv>[]),
  };
  return Object.assign(route, { felis });
}

/** One route as a table holds it: the OpenAPI definition (what the document shows), its rules, its handler. */
export interface RouteEntry {
  route: RouteConfig;
  rules: RouteRules;
  handler: (c: Context<AppEnv>) => Response | Promise<Response>;
}

/**
 * One feature's routes on one face: definitions and handlers, bound to a face (its deps, its
 * pipeline) only when the face app mounts them (create-app.ts).
 */
export class RouteTable {
  readonly entries: RouteEntry[] = [];

  openapi<R extends RouteConfig, A extends Access>(route: DefinedRoute<R, A>, handler: RouteHandler<R, EnvOf<A>>): this {
    const { felis: rules, ...definition } = route as R & { felis?: RouteRules };
    if (!rules) throw new Error(`${route.method} ${route.path} was not declared with defineRoute`);
    const run = handler as unknown as (c: Context<AppEnv>, next: () => Promise<void>) => Response | Promise<Response>;
    this.entries.push({ route: definition as RouteConfig, rules, handler: (c) => run(c, noNext) });
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
