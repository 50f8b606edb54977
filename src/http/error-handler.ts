import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
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
 * `notFound`: a path served under other methods answers 405 with `Allow`, anything else 404.
 * The route table is compiled once, on the first miss.
 */
export function notFoundHandler(app: Hono<AppEnv>) {
  let table: Array<{ pattern: RegExp; methods: Set<string> }> | undefined;
  return (c: Context<AppEnv>): Response => {
    table ??= compileRoutes(app.routes);
    const allowed = new Set<string>();
    for (const { pattern, methods } of table) {
      if (pattern.test(c.req.path)) for (const m of methods) allowed.add(m);
    }
    if (allowed.size > 0) {
      if (allowed.has('GET')) allowed.add('HEAD');
      const allow = [...allowed].sort().join(', ');
      return errorResponse(c, 405, 'method_not_allowed', new DomainError('method_not_allowed').message, { Allow: allow });
    }
    return errorResponse(c, 404, 'not_found', new DomainError('not_found').message);
  };
}

function compileRoutes(routes: Hono['routes']) {
  const byPath = new Map<string, Set<string>>();
  for (const r of routes) {
    if (r.method === 'ALL') continue; // middleware
    const methods = byPath.get(r.path) ?? new Set<string>();
    methods.add(r.method.toUpperCase());
    byPath.set(r.path, methods);
  }
  return [...byPath].map(([path, methods]) => ({ pattern: pathToRegExp(path), methods }));
}

/**
 * Hono path syntax (`/a/:id`, `/a/:id{.+}`, `/a/*`) to an anchored expression. Exact like Hono's
 * strict routing: `/a/` is not `/a`, so it is a 404 and never a 405 whose `Allow` names the method used.
 */
export function pathToRegExp(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      const param = /^:[\w-]+(?:\{(.+)\})?\??$/.exec(segment);
      if (param) return param[1] ? `(?:${param[1]})` : '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}
