import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { methodNotAllowed } from 'hono/method-not-allowed';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { failureForLog } from '../lib/failure-for-log.js';
import { findUnavailable } from '../lib/unavailable.js';
import type { AppEnv } from './env.js';
import { answerOf, codeForStatus, type ErrorEnvelope } from './errors.js';
import { DomainError, type ErrorCode } from '../lib/errors.js';

export function errorResponse(
  c: Context<AppEnv>,
  status: ContentfulStatusCode,
  code: ErrorCode | string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const body: ErrorEnvelope = { error: { code, message, request_id: c.get('requestId') } };
  return c.json(body, status, headers);
}

/** `onError`: every failure leaves as the envelope; only the unexpected ones are logged as errors. */
export function handleError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof DomainError) {
    const { status, code, headers } = answerOf(err);
    return errorResponse(c, status, code, err.message, headers);
  }
  if (err instanceof HTTPException && err.status < 500) {
    // Thrown by Hono's own middleware: malformed JSON, the media-type gate, the body limit.
    const code = codeForStatus(err.status);
    const message = code === 'bad_request' ? err.message || 'The request is malformed.' : new DomainError(code).message;
    return errorResponse(c, err.status as ContentfulStatusCode, code, message);
  }
  const unavailable = findUnavailable(err);
  if (unavailable) {
    c.get('deps')?.log.warn(
      { dependency: unavailable.dependency, reason: unavailable.message, request_id: c.get('requestId'), method: c.req.method, path: c.req.path },
      'dependency unavailable',
    );
    const message = `The ${unavailable.dependency} cannot be reached right now; try again shortly.`;
    return errorResponse(c, 503, 'unavailable', message, { 'Retry-After': String(unavailable.retryAfterSeconds) });
  }
  c.get('deps')?.log.error(
    { err: failureForLog(err), request_id: c.get('requestId'), method: c.req.method, path: c.req.path },
    'unexpected error',
  );
  return errorResponse(c, 500, 'internal', new DomainError('internal').message);
}

/**
 * `notFound`: a path served under other methods answers 405 with `Allow` (Hono's own
 * method-not-allowed middleware finds them in the app's routes), anything else 404.
 */
export function notFoundHandler(app: Hono<AppEnv>) {
  const otherMethods = methodNotAllowed<AppEnv>({
    app,
    onMethodNotAllowed: (c, methods) =>
      errorResponse(c, 405, 'method_not_allowed', new DomainError('method_not_allowed').message, { Allow: [...methods].sort().join(', ') }),
  });
  return async (c: Context<AppEnv>): Promise<Response> => {
    await otherMethods(c, async () => {
      c.res = errorResponse(c, 404, 'not_found', new DomainError('not_found').message);
    });
    return c.res;
  };
}
