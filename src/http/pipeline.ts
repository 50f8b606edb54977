import { randomUUID } from 'node:crypto';
import type { RouteConfig } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { ZodType } from 'zod';
import type { Deps } from '../deps.js';
import { AnswerResponse } from '../runtime/node-response.js';
import { accessLogOf, lineOpening, type AccessLog } from './access-log.js';
import { checkDeclaredJsonBody, declaresBody, isJsonMediaType, limitJsonBody } from './body.js';
import { isCrossSite } from './cross-site.js';
import type { AppEnv, Face } from './env.js';
import { handleError } from './error-handler.js';
import { ApiError } from './errors.js';
import { requestHeader } from './request-header.js';
import type { RequestSeries } from './request-metrics.js';
import { rulesOf, type RouteEntry } from './route.js';
import { ensureSecurityHeaders, presetSecurityHeaders, viaTlsEdge } from './security-headers.js';
import { accessCheck } from './tiers.js';

type Answer = Response | Promise<Response>;
type Step = (c: Context<AppEnv>) => Answer;

/** Inbound ids we keep: 1 to 128 of letters, digits, `-`, `_` and `=` (anything else is replaced). */
const REQUEST_ID_MAX = 128;
const REQUEST_ID = /^[\w\-=]+$/;

/**
 * The whole handling of one route (or of the not-found answer) as ONE function, registered as the
 * route's only Hono handler. Hono calls a route with a single handler directly and, when it answers
 * synchronously, so does @hono/node-server: no promise is made for a request that needs none (the
 * proxy's by-host, a service token, path validation). A chain of async middlewares cost the hot
 * path about as much as all of their work together (bench/by-host.ts).
 *
 * In order: deps and request id, the answer headers, the cross-site guard (before any
 * authentication), the step, then the metrics and the request's log line; every failure becomes
 * the envelope here, so it is observed like any answer.
 */
export function behindFrontDoor(face: Face, deps: Deps, route: string, step: Step): Step {
  const door = new FrontDoor(face, deps, route);
  return (c) => {
    const started = performance.now();
    c.set('deps', deps);
    const inbound = requestHeader(c, 'x-request-id');
    const requestId =
      inbound !== undefined && inbound.length <= REQUEST_ID_MAX && REQUEST_ID.test(inbound) ? inbound : randomUUID();
    c.set('requestId', requestId);
    const tls = viaTlsEdge(c);
    const node = answerResponseOf(c);
    if (node) {
      node.requestId = requestId;
      node.viaTls = tls;
    } else presetSecurityHeaders(c, requestId, tls);

    let answer: Answer;
    try {
      answer = isCrossSite(c) ? handleError(new ApiError('cross_site'), c) : step(c);
    } catch (err) {
      answer = handleError(err as Error, c);
    }
    if (!(answer instanceof Promise)) return door.finish(c, answer, started, requestId, tls, node === undefined);
    return answer.then(
      (res) => door.finish(c, res, started, requestId, tls, node === undefined),
      (err: Error) => door.finish(c, handleError(err, c), started, requestId, tls, node === undefined),
    );
  };
}

/**
 * What the front door does once a route has answered: the headers where the Node response could
 * not merge them, the metrics, the log line. A method, not a closure made per request: the hot path
 * runs under tsx, whose transform names every function expression it creates (`__name`), which
 * cost by-host a measurable share of its throughput.
 */
class FrontDoor {
  private readonly accessLog: AccessLog;
  /** What the route's answers to one method share: the log line's opening, the series by status. */
  private readonly byMethod = new Map<string, MethodAnswers>();

  constructor(
    private readonly face: Face,
    private readonly deps: Deps,
    private readonly route: string,
  ) {
    this.accessLog = accessLogOf(deps.log);
  }

  finish(c: Context<AppEnv>, res: Response, started: number, requestId: string, tls: boolean, ensureHeaders: boolean): Response {
    if (ensureHeaders) ensureSecurityHeaders(res, requestId, tls);
    const seconds = (performance.now() - started) / 1000;
    const method = this.methodOf(c.req.method);
    const { status } = res;
    this.seriesOf(method, status).observe(seconds);
    if (this.accessLog.wants(status)) {
      this.accessLog.add(method.opening, {
        path: c.req.path,
        status,
        duration_ms: Math.round(seconds * 1e5) / 100,
        request_id: requestId,
        // c.get, not c.var: Hono builds a fresh object of every variable on each read of c.var.
        caller: c.get('caller'),
        user_id: c.get('session')?.userId,
      });
    }
    return res;
  }

  private methodOf(method: string): MethodAnswers {
    let found = this.byMethod.get(method);
    if (!found) this.byMethod.set(method, (found = { name: method, opening: lineOpening(this.face, method, this.route), series: new Map() }));
    return found;
  }

  private seriesOf(method: MethodAnswers, status: number): RequestSeries {
    let found = method.series.get(status);
    if (!found) {
      found = this.deps.metrics.requests.seriesOf({ face: this.face, method: method.name, route: this.route, status: String(status) });
      method.series.set(status, found);
    }
    return found;
  }
}

interface MethodAnswers {
  name: string;
  opening: string;
  series: Map<number, RequestSeries>;
}

/** The Node response when our server (runtime/serve.ts) is answering; it merges the answer headers. */
function answerResponseOf(c: Context): AnswerResponse | undefined {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  return outgoing instanceof AnswerResponse && !outgoing.headersSent ? outgoing : undefined;
}

/**
 * A route's own work behind the front door: access, the body rules, the route's middleware, then
 * validation of path, query and body, then the handler. Synchronous unless a step must wait.
 */
export function routeStep({ route, handler }: RouteEntry): Step {
  const rules = rulesOf(route);
  const checkAccess = accessCheck(rules.access);
  const params = route.request?.params as ZodType | undefined;
  const query = route.request?.query as ZodType | undefined;
  const json = jsonBodyOf(route);
  const { declaredBody, middleware } = rules;

  const paramNames = [...route.path.matchAll(/{(.+?)}/g)].map((match) => match[1]!);
  const validatePathAndQuery = (c: Context<AppEnv>): void => {
    if (params) validate(c, 'param', params, pathValues(c, paramNames));
    if (query) validate(c, 'query', query, queryValues(c));
  };
  // Path and query before the body, as zod-openapi's validators ran them.
  const readBodyThenHandle: Step = json
    ? async (c) => {
        validatePathAndQuery(c);
        await readJsonBody(c, json);
        return handler(c);
      }
    : (c) => {
        validatePathAndQuery(c);
        return handler(c);
      };
  const afterAccess: Step =
    middleware.length === 0
      ? (c) => {
          if (declaredBody === 'json') checkDeclaredJsonBody(c);
          return readBodyThenHandle(c);
        }
      : (c) => {
          if (declaredBody === 'json') checkDeclaredJsonBody(c);
          return runMiddleware(c, middleware, readBodyThenHandle);
        };

  return (c) => {
    if (typeof declaredBody === 'function' && declaresBody(c)) return declaredBody(c);
    const checking = checkAccess(c);
    return checking ? checking.then(() => afterAccess(c)) : afterAccess(c);
  };
}

function validate(c: Context<AppEnv>, target: 'param' | 'query' | 'json', schema: ZodType, value: unknown): void {
  const result = schema.safeParse(value);
  if (!result.success) {
    // The envelope's 400, naming the first issue (never zod's own body).
    const first = result.error.issues[0];
    const where = first?.path.length ? `${first.path.join('.')}: ` : '';
    throw new ApiError('bad_request', first ? `${target} ${where}${first.message}` : undefined);
  }
  c.req.addValidatedData(target, result.data as object);
}

/** The decoded path parameters, read one by one (`c.req.param()` lists the matched route's keys first). */
function pathValues(c: Context, names: string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of names) {
    const value = c.req.param(name);
    if (value !== undefined) values[name] = value;
  }
  return values;
}

/** As Hono's validator reads a query: a repeated key becomes an array. */
function queryValues(c: Context): Record<string, string | string[]> {
  const values: Record<string, string | string[]> = {};
  for (const [key, all] of Object.entries(c.req.queries())) values[key] = all.length === 1 ? all[0]! : all;
  return values;
}

interface JsonBody {
  schema: ZodType;
  required: boolean;
}

function jsonBodyOf(route: RouteConfig): JsonBody | undefined {
  const body = route.request?.body;
  const schema = (body?.content?.['application/json'] as { schema?: ZodType } | undefined)?.schema;
  return schema ? { schema, required: body?.required === true } : undefined;
}

/** The JSON body, counted against the limit, parsed and validated (a missing one is `{}`). */
async function readJsonBody(c: Context<AppEnv>, { schema, required }: JsonBody): Promise<void> {
  const contentType = requestHeader(c, 'content-type');
  if (!required && !contentType) {
    c.req.addValidatedData('json', {});
    return;
  }
  let value: unknown = {};
  if (isJsonMediaType(contentType)) {
    await limitJsonBody(c, async () => {
      try {
        value = await c.req.json();
      } catch {
        throw new ApiError('bad_request', 'Malformed JSON in request body');
      }
    });
  }
  validate(c, 'json', schema, value);
}

/** A route's own middleware (Hono's shape), in order; one may answer instead of going on. */
async function runMiddleware(c: Context<AppEnv>, middleware: MiddlewareHandler<AppEnv>[], last: Step): Promise<Response> {
  let index = 0;
  let answer: Response | undefined;
  const next = async (): Promise<void> => {
    const current = middleware[index++];
    if (!current) {
      answer = await last(c);
      return;
    }
    const early = await current(c, next);
    if (early instanceof Response && answer === undefined) answer = early;
  };
  await next();
  if (answer === undefined) throw new Error('route middleware gave no answer');
  return answer;
}
