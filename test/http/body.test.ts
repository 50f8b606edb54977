import { describe, expect, it } from 'vitest';
import { JSON_BODY_LIMIT } from '../../src/http/body.js';
import { bearer, createTestApp, createTestDeps, errorOf, jsonRequest } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { ECHO_PATH, fixtureRoutes } from '../helpers/fixture-routes.js';

/** A body that arrives in chunks with no Content-Length, as a chunked upload does. */
function chunkedBody(totalBytes: number, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const size = Math.min(chunkBytes, totalBytes - sent);
      controller.enqueue(new TextEncoder().encode(' '.repeat(size)));
      sent += size;
    },
  });
}

const streamInit = (body: ReadableStream<Uint8Array>, headers: Record<string, string>): RequestInit =>
  ({ method: 'POST', headers, body, duplex: 'half' }) as RequestInit;

describe('JSON body rules', () => {
  const database = useTestDatabase();
  const app = () => createTestApp('internal', createTestDeps(database()), fixtureRoutes());
  const proxy = bearer('proxy');

  it('serves a valid body', async () => {
    const res = await app().request(ECHO_PATH, jsonRequest('POST', { name: 'lobby', count: 3 }, proxy));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: 'lobby', count: 3, caller: 'proxy' });
  });

  it('accepts application/json with a charset and a +json media type', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json']) {
      const res = await app().request(ECHO_PATH, {
        method: 'POST',
        headers: { ...proxy, 'Content-Type': type },
        body: JSON.stringify({ name: 'a', count: 0 }),
      });
      expect(res.status, type).toBe(200);
    }
  });

  it('answers 415 for a body of another media type, or without one', async () => {
    const body = JSON.stringify({ name: 'a', count: 1 });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp', undefined]) {
      const headers: Record<string, string> = { ...proxy };
      if (type) headers['Content-Type'] = type;
      const res = await app().request(ECHO_PATH, { method: 'POST', headers, body: type === undefined ? new Blob([body]) : body });
      expect(res.status, String(type)).toBe(415);
      const error = await errorOf(res);
      expect(error.code).toBe('unsupported_media_type');
      expect(error.request_id).toBe(res.headers.get('x-request-id'));
    }
  });

  it('answers 413 too_large for a declared Content-Length over 1 MiB without reading it', async () => {
    const res = await app().request(ECHO_PATH, {
      method: 'POST',
      headers: { ...proxy, 'Content-Type': 'application/json', 'Content-Length': String(JSON_BODY_LIMIT + 1) },
      body: '{}',
    });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe('too_large');
  });

  it('answers 413 too_large for a streamed body over 1 MiB without Content-Length', async () => {
    const res = await app().request(
      ECHO_PATH,
      streamInit(chunkedBody(JSON_BODY_LIMIT + 1), { ...proxy, 'Content-Type': 'application/json' }),
    );
    expect(res.status).toBe(413);
    const error = await errorOf(res);
    expect(error.code).toBe('too_large');
    expect(error.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('reads a streamed body of exactly 1 MiB (the limit is inclusive)', async () => {
    const json = JSON.stringify({ name: 'big', count: 1 });
    const padded = json + ' '.repeat(JSON_BODY_LIMIT - json.length);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(padded);
        for (let i = 0; i < bytes.length; i += 65536) controller.enqueue(bytes.subarray(i, i + 65536));
        controller.close();
      },
    });
    const res = await app().request(ECHO_PATH, streamInit(stream, { ...proxy, 'Content-Type': 'application/json' }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }).name).toBe('big');
  });

  it('answers 400 bad_request for malformed JSON', async () => {
    for (const body of ['{', '{"name": "a", "count": 1,}', 'not json', '{"name":"a"} trailing']) {
      const res = await app().request(ECHO_PATH, jsonRequest('POST', body, proxy));
      expect(res.status, body).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
  });

  it('answers 400 bad_request naming an unknown field', async () => {
    const res = await app().request(ECHO_PATH, jsonRequest('POST', { name: 'a', count: 1, admin: true }, proxy));
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain('admin');
  });

  it('answers 400 bad_request for wrong types, out-of-range values and non-object bodies', async () => {
    const bodies: unknown[] = [
      { name: 7, count: 1 },
      { name: 'a', count: '1' },
      { name: 'a', count: 1.5 },
      { name: 'a', count: -1 },
      { name: '', count: 1 },
      { name: 'a'.repeat(33), count: 1 },
      { name: 'a' },
      [],
      'a string',
      null,
      42,
    ];
    for (const body of bodies) {
      const res = await app().request(ECHO_PATH, jsonRequest('POST', JSON.stringify(body), proxy));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
  });

  it('answers 400 bad_request when the body is missing', async () => {
    const withoutBody = await app().request(ECHO_PATH, { method: 'POST', headers: proxy });
    expect(withoutBody.status).toBe(400);
    expect((await errorOf(withoutBody)).code).toBe('bad_request');
    const emptyJson = await app().request(ECHO_PATH, jsonRequest('POST', '', proxy));
    expect(emptyJson.status).toBe(400);
    expect((await errorOf(emptyJson)).code).toBe('bad_request');
  });

  it('checks the token before the body: a bad body without a token is 401', async () => {
    const res = await app().request(ECHO_PATH, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'x' });
    expect(res.status).toBe(401);
  });

  it('validates the path before reading the body: a bad id with a bad body names the id', async () => {
    const res = await app().request('/api/v1/fixture/items/BAD!', jsonRequest('PUT', { nope: 1 }, bearer('ops')));
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/^param id/);
    const badBodyOnly = await app().request('/api/v1/fixture/items/a1', jsonRequest('PUT', { nope: 1 }, bearer('ops')));
    expect((await errorOf(badBodyOnly)).message).toMatch(/^json/);
  });
});
