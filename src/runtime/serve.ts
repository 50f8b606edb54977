import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, BlockList, Socket } from 'node:net';
import { normalizeIp } from '../http/client-ip.js';
import { inNetworks } from '../lib/networks.js';
import { getRequestListener, type Http2Bindings, type HttpBindings } from '@hono/node-server';
import type { RuntimeBindings } from '../http/env.js';
import type { Logger } from '../lib/logger.js';
import { adapterErrorAnswer, answerClientErrors, answerExpectations } from './below-app.js';
import { AnswerResponse } from './node-response.js';
import { CONTRACT_BODY_RATE, fetchWithBodyRate, guardBodyRate, type BodyRateRule } from './body-rate.js';

export interface Listening {
  port: number;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

export interface ServeOptions {
  fetch: (request: Request, env: RuntimeBindings) => Response | Promise<Response>;
  port: number;
  host: string;
  log: Logger;
  bodyRate?: BodyRateRule;
  /** Node's `headersTimeout` (the head must arrive within it, else 408); Node's default otherwise. */
  headersTimeoutMs?: number;
  /** Connections held at once (Node's `maxConnections`: more are closed at once); none when absent or 0. */
  maxConnections?: number;
  /** Connections held at once from one peer address; more are closed at once. None when absent or 0. */
  maxConnectionsPerAddress?: number;
  /** Peers the per-address cap leaves alone (the trusted edge proxies, which carry many visitors). */
  uncappedPeers?: BlockList;
}

export const isBun = typeof process.versions.bun === 'string';

export function serve(options: ServeOptions): Promise<Listening> {
  return isBun ? serveBun(options) : serveNode(options);
}

function serveNode(options: ServeOptions): Promise<Listening> {
  // No 'upgrade' listener: the proxy's Java client offers h2c on every request, and Node then
  // answers it as the plain HTTP/1.1 request it also is.
  const server = createServer(
    {
      // Merges each answer's request id and contract headers into its one writeHead (node-response.ts).
      ServerResponse: AnswerResponse,
      // A missing Host is the adapter's 400 with the envelope (below-app.ts), not Node's bare one.
      requireHostHeader: false,
      // The whole request is not bounded here (an upload may take minutes): its body is held to
      // the body-rate rule (body-rate.ts). The check runs often enough that a slow head is cut
      // within a quarter of its time-out, not Node's 30 s interval later.
      ...(options.headersTimeoutMs === undefined
        ? {}
        : { headersTimeout: options.headersTimeoutMs, requestTimeout: 0, connectionsCheckingInterval: Math.max(100, Math.ceil(options.headersTimeoutMs / 4)) }),
    },
    // This server speaks HTTP/1.1 only, so the adapter's bindings are always node:http's.
    getRequestListener(options.fetch as (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>, {
      errorHandler: adapterErrorAnswer(options.log),
    }),
  );
  answerClientErrors(server, options.log);
  answerExpectations(server, options.log);
  guardBodyRate(server, options.bodyRate ?? CONTRACT_BODY_RATE, options.log);
  const connections = trackConnections(server);
  if (options.maxConnections) server.maxConnections = options.maxConnections;
  if (options.maxConnectionsPerAddress) capPerAddress(server, options.maxConnectionsPerAddress, options.log, options.uncappedPeers);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: (graceMs = 10_000) =>
          new Promise<void>((done) => {
            const force = setTimeout(() => server.closeAllConnections(), graceMs);
            server.close(() => {
              clearTimeout(force);
              done();
            });
            connections.drain();
          }),
      });
    });
  });
}

/**
 * What Node's `close()` leaves open: a connection counts as idle only after its first request, so a
 * pre-opened one (connection pools, browsers) would hold the stop until the force timer; and a
 * kept-alive connection whose request finishes during the stop stays open for keepAliveTimeout.
 * `drain()` closes the first kind and makes the in-flight answers the last of their connections.
 */
function trackConnections(server: Server): { drain(): void } {
  const unused = new Set<Socket>();
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    unused.delete(req.socket);
    if (draining) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    drain() {
      draining = true;
      for (const socket of unused) socket.destroy();
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      server.closeIdleConnections();
    },
  };
}

/**
 * Closes a connection at once when its peer address already holds `max`: one client opening
 * sockets by the thousand (slow heads, idle keep-alives) cannot take every descriptor of the
 * process. One warning per address while it is over.
 */
function capPerAddress(server: Server, max: number, log: Pick<Logger, 'warn'>, uncapped?: BlockList): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = normalizeIp(socket.remoteAddress ?? '');
    if (uncapped && inNetworks(uncapped, address)) return;
    const count = open.get(address) ?? 0;
    if (count >= max) {
      if (count === max) log.warn({ address, max }, 'connections from one address over the cap: closing new ones');
      open.set(address, max + 1);
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = Math.min(open.get(address) ?? 1, max) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

interface BunServer {
  port: number;
  stop(closeActiveConnections?: boolean): Promise<void>;
  requestIP(request: Request): { address: string; family: string; port: number } | null;
  timeout(request: Request, seconds: number): void;
}
declare const Bun: { serve(options: Record<string, unknown>): BunServer };

/**
 * The env a handler sees under Bun, bound to the request Bun received: middleware may replace
 * `c.req.raw` (the body-rate counter, a chunked body read by bodyLimit), and Bun knows only the original.
 */
function bunRequestEnv(server: BunServer, request: Request) {
  return {
    server,
    requestIP: () => server.requestIP(request),
    timeout: (_request: Request, seconds: number) => server.timeout(request, seconds),
  };
}

async function serveBun(options: ServeOptions): Promise<Listening> {
  const rule = options.bodyRate ?? CONTRACT_BODY_RATE;
  // idleTimeout also closes a connection that sends nothing at all.
  const server = Bun.serve({
    fetch: (request: Request, bunServer: BunServer) =>
      fetchWithBodyRate(options.fetch, request, bunRequestEnv(bunServer, request), rule, options.log),
    port: options.port,
    hostname: options.host,
    idleTimeout: 30,
  });
  return {
    port: server.port,
    close: async (graceMs = 10_000) => {
      const force = setTimeout(() => void server.stop(true), graceMs);
      await server.stop(false);
      clearTimeout(force);
    },
  };
}
