import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** How a line names its level and its time; shared with the request log, which formats its own lines. */
export const levelField = (label: string) => ({ level: label });
export const timeField = pino.stdTimeFunctions.isoTime;

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'felis' },
      timestamp: timeField,
      formatters: { level: levelField },
      redact: { paths: ['*.authorization', '*.cookie', '*.password', '*.token'], censor: '[redacted]' },
    },
    destination,
  );
}
