import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppDeps, AppEnv, SignedInEnv } from '../../http/env.js';
import { ERROR_STATUS } from '../../http/errors.js';
import { createRouter, defineRoute, errorAnswer } from '../../http/route.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { LastEventIdHeader } from './event-ids.js';
import { ServerNameParam } from './schema.js';
import { openConsoleStream } from './stream.js';
import type { ConsoleParts } from './log-hub.js';
import type { ServersParts } from '../servers/index.js';

const consoleStream = defineRoute(
  { tier: 'app' },
  {
    method: 'get',
    path: '/api/v1/servers/{name}/console',
    summary: "The running pod's log lines as Server-Sent Events (owner or staff)",
    description:
      'Each event is `id: <unix second>.<six digits>` (the line’s second and its number within it, the same on every replica) ' +
      'and `data: <log line>`; `:` keep-alives at least every 15 s; `event: revoked` ends a stream whose session or access is ' +
      'gone (checked every minute). A reconnect with `Last-Event-ID` within one hour resumes exactly after that line (a whole ' +
      'unix second: from that second’s first line). Streams end after 30 minutes.',
    request: {
      params: ServerNameParam,
      headers: z.strictObject({ 'last-event-id': LastEventIdHeader.optional() }),
    },
    responses: {
      200: { description: 'the log lines', content: { 'text/event-stream': { schema: z.string() } } },
      400: errorAnswer('bad_request: a malformed Last-Event-ID'),
      403: errorAnswer('not the owner or staff'),
      404: errorAnswer('no such server'),
      409: errorAnswer('not_running: the server runs no pod'),
      429: errorAnswer('rate_limited: too many open event streams (Retry-After)'),
      503: errorAnswer('the cluster cannot be reached'),
    },
  },
  { streamed: true },
);

/** Under Bun, this request may sit quiet longer than the server's idle time-out (keep-alives also run). */
function noIdleTimeout<E extends AppEnv>(c: Context<E>): void {
  c.env?.timeout?.(c.req.raw, 0);
}

/** The request's session now: undefined once it is refused (401, 403); any other failure is no verdict. */
async function sessionNow(c: Context<SignedInEnv>): Promise<SessionContext | undefined> {
  try {
    return await c.var.deps.sessions!.authenticate(c, { tier: 'app', setupAllowed: false });
  } catch (err) {
    const status = err instanceof DomainError ? ERROR_STATUS[err.code] : undefined;
    if (status === 401 || status === 403) return undefined;
    throw err;
  }
}

export function consoleStreamRoutes(deps: AppDeps & ConsoleParts & ServersParts) {
  return createRouter().openapi(consoleStream, async (c) => {
    const body = await openConsoleStream(deps, {
      session: c.var.session,
      name: c.req.valid('param').name,
      lastEventId: c.req.valid('header')['last-event-id'],
      signal: c.req.raw.signal,
      currentSession: () => sessionNow(c),
    });
    noIdleTimeout(c);
    return c.body(body, 200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  });
}
