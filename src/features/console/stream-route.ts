import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { ERROR_STATUS } from '../../http/errors.js';
import { createRouter, defineRoute, errorAnswer } from '../../http/route.js';
import { RESUME_WINDOW_MS } from './log-hub.js';
import { ServerNameParam } from './schema.js';
import { isOwnerOrStaff } from '../servers/index.js';
import { consoleServer } from './service.js';
import { consoleSse, type Recheck } from './sse.js';
import { takeStreamSlot } from './stream-slots.js';

/** A running pod (booting, serving or shutting down) has a log to read. */
const HAS_POD = new Set(['Starting', 'Running', 'Stopping']);

const consoleStream = defineRoute(
  { tier: 'app' },
  {
    method: 'get',
    path: '/api/v1/servers/{name}/console',
    summary: "The running pod's log lines as Server-Sent Events (owner or staff)",
    description:
      'Each event is `id: <unix seconds>` and `data: <log line>`; `:` keep-alives at least every 15 s; ' +
      '`event: revoked` ends a stream whose session or access is gone (checked every minute). A reconnect with ' +
      '`Last-Event-ID` within one hour resumes after that second. Streams end after 30 minutes.',
    request: {
      params: ServerNameParam,
      headers: z.strictObject({ 'last-event-id': z.string().regex(/^\d{1,12}$/, 'Last-Event-ID is a unix second').optional() }),
    },
    responses: {
      200: { description: 'the log lines', content: { 'text/event-stream': { schema: z.string() } } },
      403: errorAnswer('not the owner or staff'),
      404: errorAnswer('no such server'),
      409: errorAnswer('not_running: the server runs no pod'),
      429: errorAnswer('rate_limited: too many open event streams (Retry-After)'),
      503: errorAnswer('the cluster cannot be reached'),
    },
  },
  { streamed: true },
);

/** Where a resume starts: the second after Last-Event-ID, when that second is within the last hour. */
export function resumeFrom(lastEventId: string | undefined, nowMs: number): number | undefined {
  if (lastEventId === undefined) return undefined;
  const fromMs = (Number(lastEventId) + 1) * 1000;
  if (fromMs > nowMs + 1000 || nowMs - fromMs > RESUME_WINDOW_MS) return undefined;
  return fromMs;
}

/** Under Bun, this request may sit quiet longer than the server's idle time-out (keep-alives also run). */
function noIdleTimeout<E extends AppEnv>(c: Context<E>): void {
  const env = c.env as { timeout?: (request: Request, seconds: number) => void } | undefined;
  env?.timeout?.(c.req.raw, 0);
}

export function consoleStreamRoutes() {
  return createRouter().openapi(consoleStream, async (c) => {
    const { deps } = c.var;
    const session = c.var.session;
    const { name } = c.req.valid('param');
    const server = await consoleServer(deps, name, session);
    if (!HAS_POD.has(server.resource.status.phase)) throw new DomainError('not_running', `${name} is not running; wake it first.`);
    const hubs = deps.consoleLogs;
    hubs.endOn(deps.shutdown);
    if (hubs.closing) throw new DomainError('unavailable', 'The service is shutting down; reconnect in a moment.');
    const slot = await takeStreamSlot(deps, session.userId, 'console', name, hubs.timings.recheckMs * 2);
    let hub = hubs.hub(name);
    await hub.ready;
    if (hub.ended) {
      hub = hubs.hub(name);
      await hub.ready;
    }
    if (hub.ended || c.req.raw.signal.aborted) {
      hub.closeIfIdle();
      await slot.release();
      throw new DomainError('not_running', `${name} runs no pod to read.`);
    }
    const recheck: Recheck = async () => {
      try {
        const current = await deps.sessions!.authenticate(c, { tier: 'app', setupAllowed: false });
        if (!(await isOwnerOrStaff(deps, name, current))) return 'revoked';
        await slot.renew();
        return 'allowed';
      } catch (err) {
        // A refusal of the session itself (401, 403) ends the stream; anything else is not a verdict.
        const status = err instanceof DomainError ? ERROR_STATUS[err.code] : undefined;
        return status === 401 || status === 403 ? 'revoked' : 'unknown';
      }
    };
    noIdleTimeout(c);
    const body = consoleSse({
      hub,
      resumeFromMs: resumeFrom(c.req.valid('header')['last-event-id'], deps.clock.now().getTime()),
      timings: hubs.timings,
      recheck,
      onClose: () => void slot.release().catch((err: Error) => deps.log.warn({ err: err.message }, 'stream slot not released')),
    });
    return c.body(body, 200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  });
}
