import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * JSON lines. Without a destination they go to stdout through pino's asynchronous destination
 * (written in the background, flushed at exit). The wildcard redaction is the safety net for
 * objects logged whole; the request log's children drop it (http/access-log.ts).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'felis' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: ['*.authorization', '*.cookie', '*.password', '*.token'], censor: '[redacted]' },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
