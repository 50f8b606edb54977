import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { captureLog } from '../../test/helpers/log.js';
import { ACCESS_LOG_DELAY_MS, AccessLog, decimalText, flushAccessLogs, lineOpening } from './access-log.js';

const OPENING = lineOpening('internal', 'GET', '/r');
/** What pino is handed for the same line: the opening's fields and the line's own. */
const ROUTE = { face: 'internal', method: 'GET', route: '/r' };
const line = (status: number) => ({
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
      access.add(OPENING, line(200));
      vi.advanceTimersByTime(7);
      access.add(OPENING, line(503));
      vi.advanceTimersByTime(ACCESS_LOG_DELAY_MS - 8);
      expect(writes).toEqual([]); // nothing is written while answers still go out
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
    for (let i = 0; i < 511; i++) access.add(OPENING, line(200));
    expect(writes).toHaveLength(0);
    access.add(OPENING, line(204));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.split('\n').filter(Boolean)).toHaveLength(512);
    access.add(OPENING, line(201));
    flushAccessLogs();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]!)).toMatchObject({ status: 201 });
  });

  it('keeps lines whole and in order when a batch outgrows its buffer, however long a line is', () => {
    const { stream, writes } = sink();
    const access = new AccessLog(createLogger('info', stream));
    const paths = ['/a', `/${'é'.repeat(200_000)}`, '/b', ...Array.from({ length: 300 }, (_, i) => `/${i}${'x'.repeat(1000)}`)];
    for (const path of paths) access.add(OPENING, { ...line(200), path });
    flushAccessLogs();
    expect(writes.length).toBeGreaterThan(1);
    const written = writes.join('').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { path: string }).path);
    expect(written).toEqual(paths);
  });

  it('writes the very line pino writes for the same fields, bindings included', () => {
    const ours = sink();
    const theirs = sink();
    const fields = { ...line(200), path: '/r/"quoted"\\/é', user_id: 'u-1' };
    const access = new AccessLog(createLogger('info', ours.stream).child({ component: 'http' }));
    access.add(lineOpening('internal', 'GET', '/r/{"x"}'), fields);
    access.add(OPENING, { ...fields, status: 502 });
    access.flush();
    const pinoLog = createLogger('info', theirs.stream).child({ component: 'http' });
    pinoLog.info({ ...ROUTE, route: '/r/{"x"}', ...fields }, 'request');
    pinoLog.error({ ...ROUTE, ...fields, status: 502 }, 'request');
    const untimed = (writes: string[]) => writes.join('').replace(/"time":"[^"]+"/g, '"time":"T"');
    expect(untimed(ours.writes)).toBe(untimed(theirs.writes));
    expect(ours.writes).toHaveLength(1); // one write per batch
  });

  it('writes what pino writes for any path, user id and request id the front door lets through', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    const requestIds = fc.stringMatching(/^[\w\-=]{1,128}$/);
    fc.assert(
      fc.property(text, requestIds, fc.option(text, { nil: undefined }), (path, requestId, userId) => {
        const ours = sink();
        const theirs = sink();
        const fields = { ...line(200), path, request_id: requestId, user_id: userId };
        const access = new AccessLog(createLogger('info', ours.stream));
        access.add(OPENING, fields);
        access.flush();
        createLogger('info', theirs.stream).info({ ...ROUTE, ...fields }, 'request');
        const untimed = (writes: string[]) => writes.join('').replace(/"time":"[^"]+"/, '"time":"T"');
        expect(untimed(ours.writes)).toBe(untimed(theirs.writes));
      }),
      { numRuns: 300 },
    );
  });

  it('writes a duration as JSON does', () => {
    const measured = fc.double({ min: 0, max: 1e7, noNaN: true }).map((ms) => Math.round(ms * 1e3) / 100);
    fc.assert(
      fc.property(fc.oneof(measured, fc.double()), (ms) => {
        expect(decimalText(ms)).toBe(JSON.stringify(ms));
      }),
      { numRuns: 5000 },
    );
    for (const ms of [0, 0.01, 0.1, 0.12, 1, 1.5, 10.05, 99.99, 123456.78]) expect(decimalText(ms)).toBe(JSON.stringify(ms));
  });

  it('knows which lines its level drops', () => {
    const access = new AccessLog(captureLog('warn').log);
    expect(access.wants(200)).toBe(false);
    expect(access.wants(500)).toBe(true);
  });
});
