import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouter } from '../../src/http/route.js';
import { serve, type Listening } from '../../src/runtime/serve.js';
import { createTestApp, createTestDeps, TOKENS, type TestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { CONTRACT_HEADERS, ECHO_PATH, fixtureRoutes, frontDoorProbeRoutes } from '../helpers/fixture-routes.js';
import { pipelineRoutes } from '../helpers/pipeline-routes.js';
import { RawConnection, type RawResponse } from '../helpers/raw-http.js';

/**
 * Every kind of answer the service gives on a real Node socket carries the contract's headers and
 * a request id, and every error the envelope with that id (issue 20 item 5): the app's answers,
 * a stream, and the answers made below the app by Node's parser and by the adapter.
 */
// In the order written, even under --sequence.shuffle: the last test reads what the cases before it counted and logged.
describe('every answer kind on a real socket', { shuffle: false }, () => {
  const database = useTestDatabase();
  let server: Listening;
  let deps: TestDeps;

  beforeAll(async () => {
    deps = createTestDeps(database());
    const routes = createRouter()
      .include(frontDoorProbeRoutes())
      .include(fixtureRoutes())
      .include(pipelineRoutes({ committed: [], partMaxBytes: 1000, chunks: [] }));
    const app = createTestApp('internal', deps, routes);
    server = await serve({ fetch: app.fetch, port: 0, host: '127.0.0.1', log: deps.log, headersTimeoutMs: 400 });
  });
  afterAll(() => server?.close(100));

  /** Sends exact bytes on a new connection and reads one answer. */
  async function exchange(bytes: string): Promise<RawResponse> {
    const connection = await RawConnection.open(server.port);
    try {
      await connection.write(bytes);
      return await connection.readResponse();
    } finally {
      connection.close();
    }
  }

  function expectDressed(answer: RawResponse, label: string): void {
    for (const [name, value] of Object.entries(CONTRACT_HEADERS)) expect(answer.headers[name], `${label}: ${name}`).toBe(value);
    expect(answer.headers['x-request-id'], `${label}: request id`).toMatch(/^[\w\-=]{1,128}$/);
    if (answer.status >= 400) {
      const envelope = JSON.parse(answer.body) as { error: { code: string; request_id: string } };
      expect(envelope.error.request_id, `${label}: envelope id`).toBe(answer.headers['x-request-id']);
    }
  }

  const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: t\r\n${extra}Connection: close\r\n\r\n`;

  const cases: Array<[label: string, bytes: string, status: number, code?: string]> = [
    ['JSON', get('/t/json'), 200],
    ['raw Response', get('/t/raw'), 200],
    ['DomainError', get('/t/throw'), 409, 'conflict'],
    ['crash', get('/t/crash'), 500, 'internal'],
    ['404', get('/nowhere'), 404, 'not_found'],
    ['405', get('/t/post'), 405, 'method_not_allowed'],
    ['stream', get('/t/events'), 200],
    ['download', get('/t/download/10'), 200],
    ['401', get('/api/v1/fixture/items/a1', 'X-Request-Id: keep-me\r\n').replace('GET', 'PUT'), 401, 'unauthorized'],
    ['NUL in a path', get('/api/v1/fixture/items/a%00b'), 400, 'bad_request'],
    ['lone surrogate in a JSON body', `POST ${ECHO_PATH} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${TOKENS.proxy}\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n{"name":"a\\ud800","count":1}  `, 400, 'bad_request'],
    ['NUL in a JSON body', `POST ${ECHO_PATH} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${TOKENS.proxy}\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n{"name":"a\\u0000","count":1}  `, 400, 'bad_request'],
    ['malformed request line', 'GARBAGE\r\n\r\n', 400, 'bad_request'],
    ['bad header', 'GET /t/json HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n', 400, 'bad_request'],
    ['oversized header block', `GET /t/json HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'header_too_large'],
    ['missing Host', 'GET /t/json HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'bad_request'],
    ['bad Host', 'GET /t/json HTTP/1.1\r\nHost: a b/c\r\nConnection: close\r\n\r\n', 400, 'bad_request'],
    ['bad Expect', 'GET /t/json HTTP/1.1\r\nHost: t\r\nExpect: teapot\r\nConnection: close\r\n\r\n', 417, 'expectation_failed'],
    ['Transfer-Encoding: bogus', `POST ${ECHO_PATH} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${TOKENS.proxy}\r\nContent-Type: application/json\r\nTransfer-Encoding: bogus\r\n\r\n{}`, 400, 'bad_request'],
  ];

  for (const [label, bytes, status, code] of cases) {
    it(`${label}: ${status}${code ? ` ${code}` : ''}, dressed`, async () => {
      const answer = await exchange(bytes);
      expect(answer.status, label).toBe(status);
      expectDressed(answer, label);
      if (code) expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toBe(code);
    });
  }

  it('a silent connection: 408 request_timeout with the envelope', async () => {
    const connection = await RawConnection.open(server.port);
    await connection.write('GET /t/json HTTP/1.1\r\nHost: t\r\n');
    const answer = await connection.readResponse();
    connection.close();
    expect(answer.status).toBe(408);
    expectDressed(answer, '408');
    expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toBe('request_timeout');
  });

  it('keeps an inbound request id on the app’s answers, and no client mistake is counted or logged as a 500', async () => {
    const answer = await exchange(get('/t/json', 'X-Request-Id: keep-me\r\n'));
    expect(answer.headers['x-request-id']).toBe('keep-me');
    const text = await deps.metrics.registry.metrics();
    const fiveHundreds = text.split('\n').filter((line) => line.startsWith('felis_http_requests_total') && line.includes('status="500"'));
    expect(fiveHundreds).toEqual([expect.stringContaining('route="/t/crash"')]);
    const errors = deps.captured.lines().filter((line) => line.level === 'error' && line.route !== '/t/crash' && line.msg !== 'unexpected error');
    expect(errors).toEqual([]);
  });
});
