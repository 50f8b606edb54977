import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type Listening } from '../../src/runtime/serve.js';
import { createTestApp, createTestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { CONTRACT_HEADERS, frontDoorProbeRoutes } from '../helpers/fixture-routes.js';

interface Answer {
  status: number;
  /** Lower-cased name → every value sent under it, so that a header sent twice shows. */
  headers: Map<string, string[]>;
}

function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const all = new Map<string, string[]>();
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        const name = res.rawHeaders[i]!.toLowerCase();
        all.set(name, [...(all.get(name) ?? []), res.rawHeaders[i + 1]!]);
      }
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: all }));
    })
      .on('error', reject)
      .end();
  });
}

/** On Node the answer headers are merged into the one writeHead (src/runtime/node-response.ts). */
describe('answer headers on a real Node server', () => {
  const database = useTestDatabase();
  let server: Listening;

  beforeAll(async () => {
    const deps = createTestDeps(database());
    server = await serve({ fetch: createTestApp('internal', deps, frontDoorProbeRoutes()).fetch, port: 0, host: '127.0.0.1', log: deps.log });
  });
  afterAll(() => server?.close(100));

  it('sends each contract header exactly once on answers, errors, 404s, 405s and raw responses', async () => {
    for (const [path, status, method] of [
      ['/t/json', 200, 'GET'],
      ['/t/raw', 200, 'GET'],
      ['/t/throw', 409, 'GET'],
      ['/t/crash', 500, 'GET'],
      ['/nowhere', 404, 'GET'],
      ['/t/post', 405, 'GET'],
      ['/t/json', 200, 'HEAD'],
    ] as const) {
      const res = await get(server.port, path, {}, method);
      expect(res.status, path).toBe(status);
      for (const [name, value] of Object.entries(CONTRACT_HEADERS)) expect(res.headers.get(name), `${path} ${name}`).toEqual([value]);
      expect(res.headers.get('x-request-id')?.length, path).toBe(1);
      expect(res.headers.get('strict-transport-security'), path).toBeUndefined();
      expect(res.headers.get('content-type')?.length ?? 1, path).toBe(1);
    }
    const notAllowed = await get(server.port, '/t/post');
    expect(notAllowed.headers.get('allow')).toEqual(['POST']);
  });

  it('keeps an inbound request id, adds HSTS behind the TLS edge and keeps an answer its own', async () => {
    const tls = await get(server.port, '/t/json', { 'X-Forwarded-Proto': 'https', 'X-Request-Id': 'edge-1' });
    expect(tls.headers.get('x-request-id')).toEqual(['edge-1']);
    expect(tls.headers.get('strict-transport-security')).toEqual(['max-age=63072000; includeSubDomains']);
    const raw = await get(server.port, '/t/raw', { 'X-Forwarded-Proto': 'https' });
    expect(raw.headers.get('strict-transport-security')).toEqual(['max-age=1']);
    const plain = await get(server.port, '/t/raw');
    expect(plain.headers.get('strict-transport-security')).toBeUndefined();
  });
});
