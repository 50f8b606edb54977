import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import type { Logger } from '../lib/logger.js';
import { CONTRACT_BODY_RATE, guardBodyRate, type BodyRateRule } from './body-rate.js';

export interface Listening {
  port: number;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

export interface ServeOptions {
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>;
  port: number;
  host: string;
  log: Logger;
  bodyRate?: BodyRateRule;
}

export const isBun = typeof process.versions.bun === 'string';

export function serve(options: ServeOptions): Promise<Listening> {
  return isBun ? serveBun(options) : serveNode(options);
}

function serveNode(options: ServeOptions): Promise<Listening> {
  // No 'upgrade' listener: the proxy's Java client offers h2c on every request, and Node then
  // answers it as the plain HTTP/1.1 request it also is.
  const server = createAdaptorServer({ fetch: options.fetch, hostname: options.host }) as Server;
  guardBodyRate(server, options.bodyRate ?? CONTRACT_BODY_RATE, options.log);
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
            server.closeIdleConnections();
          }),
      });
    });
  });
}

interface BunServer {
  port: number;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
declare const Bun: { serve(options: Record<string, unknown>): BunServer };

async function serveBun(options: ServeOptions): Promise<Listening> {
  // Bun has no per-request socket counters; its idleTimeout closes a connection that sends nothing.
  const server = Bun.serve({
    fetch: (request: Request, bunServer: unknown) => options.fetch(request, bunServer),
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
