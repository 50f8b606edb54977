import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { captureLog } from '../../test/helpers/log.js';
import { AccessLog } from './access-log.js';

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

describe('the request log', () => {
  it('writes the lines of a turn after it, in order, 5xx as errors', async () => {
    const written: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) written.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const access = new AccessLog(createLogger('info', sink));
    access.add(line(200));
    access.add(line(503));
    expect(written).toEqual([]); // nothing is formatted while this turn's answers still go out
    await new Promise((resolve) => setImmediate(resolve));
    expect(written.map((l) => [l.status, l.level])).toEqual([
      [200, 'info'],
      [503, 'error'],
    ]);
    expect(written[0]).toMatchObject({ service: 'felis', face: 'internal', request_id: 'id', caller: 'proxy', msg: 'request' });
  });

  it('writes the very line pino writes for the same fields, bindings included', async () => {
    const sink = () => {
      const text: string[] = [];
      const stream = new Writable({
        write(chunk: Buffer, _encoding, done) {
          text.push(chunk.toString());
          done();
        },
      });
      return { stream, text };
    };
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
    const untimed = (text: string[]) => text.join('').replace(/"time":"[^"]+"/g, '"time":"T"');
    expect(untimed(ours.text)).toBe(untimed(theirs.text));
    expect(ours.text).toHaveLength(1); // one write per batch
  });

  it('knows which lines its level drops', () => {
    const access = new AccessLog(captureLog('warn').log);
    expect(access.wants(200)).toBe(false);
    expect(access.wants(500)).toBe(true);
  });
});
