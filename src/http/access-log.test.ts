import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { captureLog } from '../../test/helpers/log.js';
import { ACCESS_LOG_DELAY_MS, AccessLog, flushAccessLogs } from './access-log.js';

const line = (status: number) => ({
  face: 'internal',
  method: 'GET',
  route: '/r',
  path: '/r',
  status,
  duration_ms: 0.12,
  request_id: 'id',
  caller: 'proxy',
  user_id: undefined,
});

/** A destination that keeps each write apart, to count the writes. */
function sink() {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString());
      done();
    },
  });
  return { stream, writes };
}

describe('the request log', () => {
  it('writes a batch at most ACCESS_LOG_DELAY_MS after its first line, in one write, 5xx as errors, each line timed when it was added', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-23T10:00:00.000Z') });
    try {
      const { stream, writes } = sink();
      const access = new AccessLog(createLogger('info', stream));
      access.add(line(200));
      vi.advanceTimersByTime(7);
      access.add(line(503));
      vi.advanceTimersByTime(ACCESS_LOG_DELAY_MS - 8);
      expect(writes).toEqual([]); // nothing is formatted or written while answers still go out
      vi.advanceTimersByTime(1);
      expect(writes).toHaveLength(1);
      const written = writes[0]!.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(written.map((l) => [l.status, l.level, l.time])).toEqual([
        [200, 'info', '2026-11-23T10:00:00.000Z'],
        [503, 'error', '2026-11-23T10:00:00.007Z'],
      ]);
      expect(written[0]).toMatchObject({ service: 'felis', face: 'internal', request_id: 'id', caller: 'proxy', msg: 'request' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes at once when 512 lines wait, and whatever waits when flushed', () => {
    const { stream, writes } = sink();
    const access = new AccessLog(createLogger('info', stream));
    for (let i = 0; i < 511; i++) access.add(line(200));
    expect(writes).toHaveLength(0);
    access.add(line(204));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.split('\n').filter(Boolean)).toHaveLength(512);
    access.add(line(201));
    flushAccessLogs();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]!)).toMatchObject({ status: 201 });
  });

  it('writes the very line pino writes for the same fields, bindings included', () => {
    const ours = sink();
    const theirs = sink();
    const fields = { ...line(200), path: '/r/"quoted"\\/é', user_id: 'u-1' };
    const access = new AccessLog(createLogger('info', ours.stream).child({ component: 'http' }));
    access.add(fields);
    access.add({ ...fields, status: 502 });
    access.flush();
    const pinoLog = createLogger('info', theirs.stream).child({ component: 'http' });
    pinoLog.info(fields, 'request');
    pinoLog.error({ ...fields, status: 502 }, 'request');
    const untimed = (writes: string[]) => writes.join('').replace(/"time":"[^"]+"/g, '"time":"T"');
    expect(untimed(ours.writes)).toBe(untimed(theirs.writes));
    expect(ours.writes).toHaveLength(1); // one write per batch
  });

  it('knows which lines its level drops', () => {
    const access = new AccessLog(captureLog('warn').log);
    expect(access.wants(200)).toBe(false);
    expect(access.wants(500)).toBe(true);
  });
});
