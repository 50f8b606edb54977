import { createRoute, OpenAPIHono, z, type RouteConfig } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';
import { ApiError } from './errors.js';
import { jsonBodyRules } from './body.js';
import { accessMiddleware, type Access } from './tiers.js';

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

/**
 * Declares an operation: its access (tier and callers) beside its OpenAPI definition. Installs the
 * access check, then the JSON body rules, ahead of zod-openapi's validators.
 */
export function defineRoute<P extends string, R extends Omit<RouteConfig, 'path'> & { path: P }>(
  access: Access,
  config: R,
) {
  const content = config.request?.body?.content ?? {};
  const hasJsonBody = 'application/json' in content;
  const isRawBody = Object.keys(content).length > 0 && !hasJsonBody;
  const own = config.middleware === undefined ? [] : [config.middleware].flat();
  return createRoute({
    ...config,
    request: config.request && {
      ...config.request,
      body: config.request.body && { required: true, ...config.request.body },
    },
    responses: { ...commonResponses(access, hasJsonBody), ...config.responses },
    middleware: [...accessMiddleware(access), ...(isRawBody ? [] : [jsonBodyRules]), ...own],
    'x-felis-tier': access.tier,
    ...(access.tier === 'service' ? { 'x-felis-callers': access.callers } : {}),
  } as R);
}

/** Turns a failed zod validation into the envelope's 400 (never zValidator's bare body). */
export function validationHook(result: { success: boolean; error?: unknown; target?: string }): void {
  if (result.success) return;
  const error = result.error as z.ZodError | undefined;
  const first = error?.issues[0];
  const where = first?.path.length ? `${first.path.join('.')}: ` : '';
  throw new ApiError('bad_request', first ? `${result.target ?? 'request'} ${where}${first.message}` : undefined);
}

/** A router for one feature's routes on one face. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}
