import type { IncomingMessage, Server } from 'node:http';
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

function declaresBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length.trim() !== '0';
}

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
    const stop = () => {
      clearTimeout(grace);
      clearInterval(interval);
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
