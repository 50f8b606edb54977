import type { IncomingMessage, Server } from 'node:http';
import { headersDeclareBody } from '../http/body.js';
import type { RuntimeBindings } from '../http/env.js';
import type { Logger } from '../lib/logger.js';

export interface BodyRateRule {
  /** How long a body may take before its rate is judged. */
  graceMs: number;
  /** The average the body must keep from then on. */
  minBytesPerSecond: number;
  checkEveryMs: number;
}

/** Contract section 8: after 30 s a body must average 16 KiB/s or the connection is closed. */
export const CONTRACT_BODY_RATE: BodyRateRule = { graceMs: 30_000, minBytesPerSecond: 16 * 1024, checkEveryMs: 1000 };

const declaresBody = (req: IncomingMessage) => headersDeclareBody(req.headers['transfer-encoding'], req.headers['content-length']);

/**
 * Watches every request with a body and destroys the connection of one that trickles (a slow-body
 * attack holds a connection and a handler for as long as the client likes). Bytes are counted on
 * the socket, so the check does not consume or slow the body the handler reads.
 */
export function guardBodyRate(server: Server, rule: BodyRateRule, log: Logger): void {
  server.on('request', (req: IncomingMessage) => {
    if (!declaresBody(req)) return;
    const socket = req.socket;
    const started = Date.now();
    const bytesAtStart = socket.bytesRead;
    let interval: NodeJS.Timeout | undefined;
    // Detached when the body ends: a kept-alive connection carries many requests, and a listener
    // left per request on its socket would pile up for the connection's lifetime.
    const stop = () => {
      clearTimeout(grace);
      clearInterval(interval);
      req.off('end', stop);
      socket.off('close', stop);
    };
    const check = () => {
      if (req.complete || socket.destroyed) return stop();
      const elapsedSeconds = (Date.now() - started) / 1000;
      const rate = (socket.bytesRead - bytesAtStart) / elapsedSeconds;
      if (rate < rule.minBytesPerSecond) {
        stop();
        log.warn(
          { method: req.method, path: req.url?.split('?')[0], bytes_per_second: Math.round(rate) },
          'request body too slow; connection closed',
        );
        socket.destroy();
      }
    };
    const grace = setTimeout(() => {
      check();
      if (!socket.destroyed && !req.complete) interval = setInterval(check, rule.checkEveryMs);
    }, rule.graceMs);
    req.once('end', stop);
    socket.once('close', stop);
  });
}

type FetchHandler = (request: Request, env: RuntimeBindings) => Response | Promise<Response>;

const declaresBodyHeaders = (headers: Headers) => headersDeclareBody(headers.get('transfer-encoding'), headers.get('content-length'));

/**
 * The same rule where no socket is reachable (Bun.serve): the body is counted as the handler reads
 * it, and only the time spent waiting on the client is judged, so a handler that has not started
 * reading never condemns a client. A body too slow ends the exchange with 408 and
 * `Connection: close`, on which Bun closes the connection.
 */
export function fetchWithBodyRate(
  fetch: FetchHandler,
  request: Request,
  env: RuntimeBindings,
  rule: BodyRateRule,
  log: Logger,
): Response | Promise<Response> {
  if (!request.body || !declaresBodyHeaders(request.headers)) return fetch(request, env);
  return fetchCountingBody(fetch, request, request.body, env, rule, log);
}

async function fetchCountingBody(
  fetch: FetchHandler,
  request: Request,
  requestBody: ReadableStream<Uint8Array>,
  env: RuntimeBindings,
  rule: BodyRateRule,
  log: Logger,
): Promise<Response> {
  const source = requestBody.getReader();
  let bytes = 0;
  let waitedMs = 0;
  let waitingSince: number | undefined;
  let tooSlow!: () => void;
  const slow = new Promise<void>((resolve) => (tooSlow = resolve));
  const check = () => {
    const waited = waitedMs + (waitingSince === undefined ? 0 : Date.now() - waitingSince);
    if (waited < rule.graceMs) return;
    const rate = bytes / (waited / 1000);
    if (rate >= rule.minBytesPerSecond) return;
    clearInterval(timer);
    log.warn(
      { method: request.method, path: new URL(request.url).pathname, bytes_per_second: Math.round(rate) },
      'request body too slow; connection closed',
    );
    source.cancel().catch(() => {});
    tooSlow();
  };
  const timer = setInterval(check, rule.checkEveryMs);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      waitingSince = Date.now();
      try {
        const { done, value } = await source.read();
        waitedMs += Date.now() - waitingSince;
        if (done) {
          clearInterval(timer);
          controller.close();
        } else {
          bytes += value.byteLength;
          controller.enqueue(value);
        }
      } catch (err) {
        clearInterval(timer);
        controller.error(err);
      } finally {
        waitingSince = undefined;
      }
    },
    cancel: (reason) => {
      clearInterval(timer);
      return source.cancel(reason);
    },
  });
  const counted = new Request(request, { body, duplex: 'half' } as RequestInit);
  try {
    return await Promise.race([
      Promise.resolve(fetch(counted, env)),
      slow.then(() => new Response(null, { status: 408, headers: { Connection: 'close' } })),
    ]);
  } finally {
    clearInterval(timer);
  }
}
