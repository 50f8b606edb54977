import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** How a line names its level and its time; shared with the request log, which formats its own lines. */
export const levelField = (label: string) => ({ level: label });
/** pino's `isoTime`, for a given moment: the request log stamps each line when its answer went out. */
export const timeFieldAt = (ms: number) => `,"time":"${new Date(ms).toISOString()}"`;

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'felis' },
      timestamp: () => timeFieldAt(Date.now()),
      formatters: { level: levelField },
      redact: { paths: ['*.authorization', '*.cookie', '*.password', '*.token'], censor: '[redacted]' },
    },
    destination,
  );
}
