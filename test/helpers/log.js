import { Writable } from 'node:stream';
import { createLogger } from '../../src/lib/logger.js';
/** A real pino logger writing into memory, so tests can assert on log lines. */
export function captureLog(level = 'info') {
    const chunks = [];
    const sink = new Writable({
        write(chunk, _enc, done) {
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
                .map((l) => JSON.parse(l));
        },
    };
}
