import { connect } from 'node:net';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import { serve, type Listening } from '../../src/runtime/serve.js';
import { requestHeader } from '../../src/http/request-header.js';
import type { AppEnv } from '../../src/http/env.js';

const NAMES = ['x-request-id', 'x-forwarded-proto', 'authorization', 'content-type', 'origin', 'sec-fetch-site', 'cookie', 'host', 'user-agent', 'absent'];

const app = new Hono<AppEnv>().all('*', (c) =>
  c.json(Object.fromEntries(NAMES.map((name) => [name, { ours: requestHeader(c, name) ?? null, hono: c.req.header(name) ?? null }]))),
);

/** One raw HTTP/1.1 request, so that headers can repeat exactly as written. */
function rawRequest(port: number, headerLines: string[]): Promise<Record<string, { ours: string | null; hono: string | null }>> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))));
    socket.on('error', reject);
    socket.write(['GET /x HTTP/1.1', 'Host: example.test', 'Connection: close', ...headerLines, '', ''].join('\r\n'));
  });
}

describe('requestHeader', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await serve({ fetch: app.fetch, port: 0, host: '127.0.0.1', log: createLogger('silent') });
  });
  afterAll(() => server.close(100));

  it('reads on Node what c.req.header reads, repeated and odd-cased copies included', async () => {
    const seen = await rawRequest(server.port, [
      'X-Request-Id: abc',
      'x-forwarded-proto: https',
      'X-Forwarded-Proto: http',
      'Authorization: Bearer one',
      'authorization: Bearer two',
      'Content-Type: application/json',
      'content-type: text/plain',
      'Cookie: a=1',
      'Cookie: b=2',
      'Origin:   http://example.test  ',
      'User-Agent:   probe/1  ',
    ]);
    for (const name of NAMES) expect(seen[name]!.ours, name).toBe(seen[name]!.hono);
    expect(seen.authorization!.ours).toBe('Bearer one, Bearer two'); // a repeat is never silently dropped
    expect(seen['x-forwarded-proto']!.ours).toBe('https, http');
    expect(seen['user-agent']!.ours).toBe('probe/1');
    expect(seen.absent!.ours).toBeNull();
  });

  it('falls back to Hono where there is no Node request (in-process requests, Bun)', async () => {
    const res = await app.request('/x', { headers: { 'X-Request-Id': 'abc' } });
    const seen = (await res.json()) as Record<string, { ours: string | null; hono: string | null }>;
    expect(seen['x-request-id']).toEqual({ ours: 'abc', hono: 'abc' });
  });
});
