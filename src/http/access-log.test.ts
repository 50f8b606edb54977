import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { RouteLog } from './access-log.js';

function sink() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}

const line = (status: number) => ({ path: '/r/a', status, duration_ms: 0.12, request_id: 'id', caller: 'proxy', user_id: undefined });

describe('the request log of a route', () => {
  it('writes one line per answer with the route and method bound, 5xx as errors, undefined fields left out', () => {
    const { stream, lines } = sink();
    const log = new RouteLog(createLogger('info', stream), 'internal', '/r/:id');
    log.write('GET', line(200));
    log.write('POST', line(503));
    expect(lines).toEqual([
      expect.objectContaining({ level: 'info', service: 'felis', face: 'internal', method: 'GET', route: '/r/:id', path: '/r/a', status: 200, duration_ms: 0.12, request_id: 'id', caller: 'proxy', msg: 'request' }),
      expect.objectContaining({ level: 'error', method: 'POST', status: 503 }),
    ]);
    expect(lines[0]).not.toHaveProperty('user_id');
    expect(typeof lines[0]!.time).toBe('string');
  });

  it('writes nothing below the logger level, and the base logger still redacts what it is handed whole', () => {
    const { stream, lines } = sink();
    const base = createLogger('error', stream);
    new RouteLog(base, 'external', '/r').write('GET', line(404));
    expect(lines).toEqual([]);
    base.error({ headers: { authorization: 'Bearer secret' } }, 'oops');
    expect(lines[0]).toMatchObject({ headers: { authorization: '[redacted]' } });
  });
});
