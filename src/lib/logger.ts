import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'felis' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: ['*.authorization', '*.cookie', '*.password', '*.token'], censor: '[redacted]' },
    },
    destination,
  );
}
