import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/lib/logger.js';

export interface CapturedLog {
  log: Logger;
  /** Every line logged so far, parsed. */
  lines(): Array<Record<string, unknown>>;
}

/** A real pino logger writing into memory, so tests can assert on log lines. */
export function captureLog(level = 'info'): CapturedLog {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return {
    log: createLogger(level, sink),
    lines: () => {
      return chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}
