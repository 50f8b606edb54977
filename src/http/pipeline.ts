import type { RouteConfig } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { every } from 'hono/combine';
import type { ZodObject, ZodType } from 'zod';
import { HotReadSampler, mayBeSampled, RouteLog, type RequestLine } from './access-log.js';
import { checkDeclaredJsonBody, declaresBody, isJsonMediaType, limitJsonBody, refuseDeepJson } from './body.js';
import { codedIssueOf } from './coded-refusal.js';
import { isCrossSite } from './cross-site.js';
import type { AppDeps, AppEnv, Face } from './env.js';
import { handleError } from './error-handler.js';
import { DomainError } from '../lib/errors.js';
import { openRawBody } from './raw-body.js';
import { requestHeader } from './request-header.js';
import { requestIdFor } from './request-id.js';
import { assertStorableText } from './storable-text.js';
import type { RequestSeries } from './request-metrics.js';
import type { RouteEntry } from './route.js';
import { answerHeaderWriterOf, ensureSecurityHeaders, presetSecurityHeaders, viaTlsEdge } from './security-headers.js';
import { accessCheck } from './tiers.js';

type Answer = Response | Promise<Response>;

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
type Step = (c: Context<AppEnv>) => Answer;

export interface FrontDoorOptions {
  /** The route answers with streams: see `RouteRules.streamed`. */
  streamed?: boolean;
  /** The route is a hot read: see `RouteRules.hotRead`. */
  hotRead?: boolean;
}

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
export function behindFrontDoor(face: Face, deps: AppDeps, route: string, step: Step, options: FrontDoorOptions = {}): Step {
  const door = new FrontDoor(face, deps, route, options.streamed ?? false, options.hotRead ?? false);
  return (c) => {
    const started = performance.now();
    c.set('deps', deps);
    const requestId = requestIdFor(requestHeader(c, 'x-request-id'));
    c.set('requestId', requestId);
    const tls = viaTlsEdge(c);
    const writer = answerHeaderWriterOf(c);
    if (writer) writer.dressAnswers(requestId, tls);
    else presetSecurityHeaders(c, requestId, tls);

    let answer: Answer;
    try {
      answer = isCrossSite(c) ? handleError(new DomainError('cross_site'), c) : step(c);
    } catch (err) {
      answer = handleError(err as Error, c);
    }
    if (!(answer instanceof Promise)) return door.finish(c, answer, started, requestId, tls, writer === undefined);
    return answer.then(
      (res) => door.finish(c, res, started, requestId, tls, writer === undefined),
      (err: Error) => door.finish(c, handleError(err, c), started, requestId, tls, writer === undefined),
    );
  };
}

/**
 * What the front door does once a route has answered: the headers where the runtime does not
 * write them, the metrics, the log line; for a streamed answer, the last two when the stream ends.
 */
class FrontDoor {
  private readonly log: RouteLog;
  /** The route's series by method and status, looked up once each. */
  private readonly series = new Map<string, RequestSeries>();
  /** Which of the route's sampled answers leave their log line (undefined: every answer does). */
  private readonly sampler: HotReadSampler | undefined;

  constructor(
    private readonly face: Face,
    private readonly deps: AppDeps,
    private readonly route: string,
    private readonly streamed: boolean,
    private readonly hotRead: boolean,
  ) {
    this.log = new RouteLog(deps.log, face, route);
    const every = deps.config.logHotReadsSample;
    this.sampler = every > 1 ? new HotReadSampler(every) : undefined;
  }

  finish(c: Context<AppEnv>, res: Response, started: number, requestId: string, tls: boolean, ensureHeaders: boolean): Response {
    if (ensureHeaders) ensureSecurityHeaders(res, requestId, tls);
    const method = c.req.method;
    const write = UNSAFE_METHODS.has(method);
    if (write) {
      // Whatever it changed (a sign-out, a revoke, a role, a claim) counts from the next request
      // on: the caches of reads (the session check, the menus) forget what they kept.
      this.deps.answeredWrites?.answered();
      if (res.status < 400 && this.deps.recordChange) this.recordChange(c, res.status, requestId);
    }
    if (this.streamed && res.body !== null && res.status < 300) return this.followStream(c, res, started, requestId);
    const ended = performance.now();
    const seconds = (ended - started) / 1000;
    this.seriesOf(method, res.status).observe(seconds);
    // A hot read's or a signed-in user's successful, fast read: its line may be left out (the
    // metrics count it). The lead's decision (issue 46): a signed-in read's line is sampled as the
    // proxy's are; its user is in the lines written.
    if (this.sampler !== undefined && mayBeSampled(!write && (this.hotRead || c.get('session') !== undefined), res.status, seconds)) {
      const standsFor = this.sampler.take(ended);
      if (standsFor > 0) this.log.write(method, this.lineOf(c, res.status, seconds, requestId, standsFor));
      return res;
    }
    this.log.write(method, this.lineOf(c, res.status, seconds, requestId));
    return res;
  }

  /** The same answer, whose body is counted as it goes out; the line and the metrics follow its end. */
  private followStream(c: Context<AppEnv>, res: Response, started: number, requestId: string): Response {
    const source = res.body!.getReader();
    let bytes = 0;
    let ended = false;
    const end = (aborted: boolean) => {
      if (ended) return;
      ended = true;
      this.seriesOf(c.req.method, res.status).streamed(bytes);
      const line = this.lineOf(c, res.status, (performance.now() - started) / 1000, requestId);
      line.bytes = bytes;
      if (aborted) line.aborted = true;
      this.log.write(c.req.method, line);
    };
    const counted = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await source.read();
          if (done) {
            end(false);
            controller.close();
          } else {
            bytes += value.byteLength;
            controller.enqueue(value);
          }
        } catch (err) {
          end(true);
          controller.error(err);
        }
      },
      cancel(reason) {
        end(true);
        return source.cancel(reason);
      },
    });
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  /** A signed-in request that changed something: handed to the audit (which writes it without delaying the answer). */
  private recordChange(c: Context<AppEnv>, status: number, requestId: string): void {
    const session = c.get('session');
    if (!session) return;
    this.deps.recordChange!({ actor: session, method: c.req.method, route: this.route, params: c.req.param() as Record<string, string>, status, requestId });
  }

  private lineOf(c: Context<AppEnv>, status: number, seconds: number, requestId: string, sampled?: number): RequestLine {
    return {
      path: c.req.path,
      status,
      duration_ms: Math.round(seconds * 1e5) / 100,
      request_id: requestId,
      // c.get, not c.var: Hono builds a fresh object of every variable on each read of c.var.
      caller: c.get('caller'),
      user_id: c.get('session')?.userId,
      sampled,
    };
  }

  private seriesOf(method: string, status: number): RequestSeries {
    const key = `${method} ${status}`;
    let found = this.series.get(key);
    if (!found) {
      found = this.deps.metrics.requests.seriesOf({ face: this.face, method, route: this.route, status: String(status) });
      this.series.set(key, found);
    }
    return found;
  }
}

/**
 * A route's own work behind the front door: access, the body rules, the route's middleware, then
 * validation of path, query and body, then the handler. Synchronous unless a step must wait.
 */
export function routeStep({ route, rules, handler }: RouteEntry): Step {
  const checkAccess = accessCheck(rules.access);
  const params = route.request?.params as ZodType | undefined;
  const query = route.request?.query as ZodType | undefined;
  const headers = route.request?.headers as ZodObject | undefined;
  const json = jsonBodyOf(route);
  const { declaredBody, middleware, rawBody } = rules;

  const paramNames = [...route.path.matchAll(/{(.+?)}/g)].map((match) => match[1]!);
  const headerNames = headers ? Object.keys(headers.shape) : [];
  const validatePathAndQuery = (c: Context<AppEnv>): void => {
    if (params) validate(c, 'param', params, pathValues(c, paramNames));
    else if (paramNames.length > 0) assertStorableText('param', pathValues(c, paramNames));
    // A route without a query schema reads its query by hand, by its own rules (hasJoined: 204).
    if (query) validate(c, 'query', query, queryValues(c));
    if (headers) validate(c, 'header', headers, headerValues(c, headerNames));
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
  const routeMiddleware = middleware.length === 0 ? undefined : every(...middleware);
  const afterBodyRules: Step = routeMiddleware === undefined ? readBodyThenHandle : (c) => runMiddleware(c, routeMiddleware, readBodyThenHandle);
  const afterAccess: Step = rawBody
    ? (c) => openRawBody(c, rawBody).then(() => afterBodyRules(c))
    : (c) => {
        if (declaredBody === 'json') checkDeclaredJsonBody(c);
        return afterBodyRules(c);
      };

  return (c) => {
    if (typeof declaredBody === 'function' && declaresBody(c)) return declaredBody(c);
    const checking = checkAccess(c);
    return checking ? checking.then(() => afterAccess(c)) : afterAccess(c);
  };
}

function validate(c: Context<AppEnv>, target: 'param' | 'query' | 'header' | 'json', schema: ZodType, value: unknown): void {
  const result = schema.safeParse(value);
  // A schema that names its own code for a refusal wins over the generic checks below.
  const coded = result.success ? undefined : codedIssueOf(result.error);
  if (coded) throw new DomainError(coded.code, coded.message);
  assertStorableText(target, value);
  if (!result.success) {
    // The envelope's 400, naming the first issue (never zod's own body).
    const first = result.error.issues[0];
    const where = first?.path.length ? `${first.path.join('.')}: ` : '';
    throw new DomainError('bad_request', first ? `${target} ${where}${first.message}` : undefined);
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

/** The headers a route's schema names (in lower case), as sent; the others are not the route's. */
function headerValues(c: Context, names: string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of names) {
    const value = requestHeader(c, name.toLowerCase());
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
    try {
      await limitJsonBody(c, async () => {
        const text = await c.req.text();
        refuseDeepJson(text);
        try {
          value = JSON.parse(text);
        } catch {
          throw new DomainError('bad_request', 'Malformed JSON in request body');
        }
      });
    } catch (err) {
      // A body that broke off (an abort, bad framing) while the limit counted it: the client's doing.
      if (err instanceof DomainError) throw err;
      throw new DomainError('bad_request', 'The request body ended before it was complete.', { cause: err });
    }
  }
  validate(c, 'json', schema, value);
}

/** A route's own middleware (Hono's shape, combined by `every`), then the route; a middleware may answer instead. */
async function runMiddleware(c: Context<AppEnv>, middleware: MiddlewareHandler<AppEnv>, last: Step): Promise<Response> {
  let answer: Response | undefined;
  await middleware(c, async () => {
    answer = await last(c);
  });
  return answer ?? c.res;
}
