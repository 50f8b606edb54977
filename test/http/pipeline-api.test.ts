import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { contentDigestOf } from '../../src/http/content-digest.js';
import { serve, type Listening } from '../../src/runtime/serve.js';
import { createTestApp, createTestDeps, errorOf } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { pipelineRoutes, type UploadStore } from '../helpers/pipeline-routes.js';
import { RawConnection } from '../helpers/raw-http.js';

const newStore = (partMaxBytes = 1000): UploadStore => ({ committed: [], partMaxBytes, chunks: [] });
const put = (body: BodyInit, headers: Record<string, string>): RequestInit => ({ method: 'PUT', body, headers });

describe('raw bodies (in process)', () => {
  const database = useTestDatabase();
  const setup = (partMaxBytes?: number) => {
    const store = newStore(partMaxBytes);
    const deps = createTestDeps(database());
    return { store, deps, app: createTestApp('external', deps, pipelineRoutes(store)) };
  };

  it('stores a body of a listed media type and gives the handler its verified sha-256', async () => {
    const { app, store } = setup();
    const bytes = gzipSync('hello');
    const res = await app.request('/t/upload', put(bytes, { 'Content-Type': 'application/gzip', 'Content-Digest': contentDigestOf(bytes) }));
    expect(res.status).toBe(200);
    const sha256 = (await res.json()) as { sha256: string; size: number; media_type: string };
    expect(sha256).toMatchObject({ size: bytes.length, media_type: 'application/gzip' });
    expect(store.committed).toEqual([{ bytes: bytes.length, sha256: sha256.sha256 }]);
  });

  it('answers 415 for a media type the route does not list, a missing one, or a content coding', async () => {
    const { app, store } = setup();
    const refused: Array<Record<string, string>> = [{ 'Content-Type': 'application/json' }, { 'Content-Type': 'text/plain' }, {}, { 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip' }];
    for (const headers of refused) {
      const res = await app.request('/t/upload', put('abc', headers));
      expect(res.status, JSON.stringify(headers)).toBe(415);
      expect((await errorOf(res)).code).toBe('unsupported_media_type');
    }
    expect(store.committed).toEqual([]);
  });

  it('answers 413 naming the limit read at request time, from the declared length or the counted bytes', async () => {
    const { app, store } = setup(10);
    const declared = await app.request('/t/upload', put('x'.repeat(11), { 'Content-Type': 'application/octet-stream' }));
    expect(declared.status).toBe(413);
    const error = await errorOf(declared);
    expect(error).toMatchObject({ code: 'too_large', message: 'The request body is larger than part_max_bytes (10 bytes).' });
    // Chunked: no length declared, counted as it arrives.
    const chunks = ['x'.repeat(6), 'x'.repeat(6)].map((text) => new TextEncoder().encode(text));
    const stream = new ReadableStream<Uint8Array>({ pull: (c) => (chunks.length ? c.enqueue(chunks.shift()) : c.close()) });
    const counted = await app.request('/t/upload', { ...put(stream, { 'Content-Type': 'application/octet-stream' }), duplex: 'half' } as RequestInit);
    expect(counted.status).toBe(413);
    store.partMaxBytes = 12; // the setting changed: the next request gets the new limit
    const fits = await app.request('/t/upload', put('x'.repeat(12), { 'Content-Type': 'application/octet-stream' }));
    expect(fits.status).toBe(200);
    expect(store.committed).toHaveLength(1);
  });

  it('answers 400 digest_mismatch and stores nothing when Content-Digest does not match; 400 for a malformed or missing one', async () => {
    const { app, store } = setup();
    const mismatch = await app.request('/t/upload', put('abc', { 'Content-Type': 'application/octet-stream', 'Content-Digest': contentDigestOf('abd') }));
    expect(mismatch.status).toBe(400);
    expect((await errorOf(mismatch)).code).toBe('digest_mismatch');
    for (const digest of ['sha-256=abc', 'sha-256=:AAAA:', 'sha-512=:AAAA:', 'md5=:x:']) {
      const res = await app.request('/t/upload', put('abc', { 'Content-Type': 'application/octet-stream', 'Content-Digest': digest }));
      expect(res.status, digest).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    const missing = await app.request('/t/upload-signed', put('abc', { 'Content-Type': 'application/octet-stream' }));
    expect(missing.status).toBe(400);
    const both = `sha-512=:${Buffer.alloc(64).toString('base64')}:, ${contentDigestOf('abc')}`;
    const signed = await app.request('/t/upload-signed', put('abc', { 'Content-Type': 'application/octet-stream', 'Content-Digest': both }));
    expect(signed.status).toBe(200);
    expect(store.committed).toHaveLength(1);
  });

  it('validates a header schema: Last-Event-ID resumes a stream, a bad one is 400', async () => {
    const { app } = setup();
    const resumed = await app.request('/t/events', { headers: { 'Last-Event-ID': '41' } });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await resumed.text()).toBe('data: line 42\nid: 42\n\ndata: line 43\nid: 43\n\ndata: line 44\nid: 44\n\n');
    const bad = await app.request('/t/events', { headers: { 'Last-Event-ID': 'x; drop' } });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toMatch(/^header last-event-id/);
  });

  it('documents the raw body, its media types and the header schema in the OpenAPI document', async () => {
    const { app } = setup();
    const doc = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } });
    const op = doc.paths!['/t/upload']!.put!;
    expect(Object.keys((op.requestBody as { content: object }).content)).toEqual(['application/octet-stream', 'application/gzip']);
    expect(Object.keys(op.responses!)).toEqual(expect.arrayContaining(['400', '413', '415']));
    expect(op).not.toHaveProperty('felis');
    expect(doc.paths!['/t/events']!.get!.parameters).toEqual([expect.objectContaining({ in: 'header', name: 'last-event-id' })]);
  });
});

describe('raw bodies and streams over a socket', () => {
  const database = useTestDatabase();
  let listening: Listening | undefined;
  afterEach(async () => {
    await listening?.close(100);
    listening = undefined;
  });

  const start = async (partMaxBytes?: number) => {
    const store = newStore(partMaxBytes);
    const deps = createTestDeps(database());
    const app = createTestApp('external', deps, pipelineRoutes(store));
    listening = await serve({ fetch: app.fetch, port: 0, host: '127.0.0.1', log: deps.log });
    return { store, deps, port: listening.port };
  };

  it('answers 413 for a chunked body past the limit and stores nothing', async () => {
    const { store, port } = await start(100_000);
    const connection = await RawConnection.open(port);
    await connection.write('PUT /t/upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = 'y'.repeat(30_000);
    for (let i = 0; i < 4; i++) await connection.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const answer = await connection.readResponse();
    connection.close();
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'too_large', request_id: answer.headers['x-request-id'] } });
    expect(store.committed).toEqual([]);
  });

  it('hands a slow body to the handler chunk by chunk as it arrives, and verifies it at the end', async () => {
    const { store, port } = await start(1_000_000);
    const parts = ['a'.repeat(1000), 'b'.repeat(1000), 'c'.repeat(1000)];
    const whole = parts.join('');
    const connection = await RawConnection.open(port);
    await connection.write(
      `PUT /t/upload-signed HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${whole.length}\r\nContent-Digest: ${contentDigestOf(whole)}\r\n\r\n`,
    );
    for (const part of parts) {
      await connection.write(part);
      // The handler has the part before the next one is sent: nothing waits for the whole body.
      await expect.poll(() => store.chunks.reduce((sum, size) => sum + size, 0)).toBeGreaterThanOrEqual(whole.indexOf(part) + part.length);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const answer = await connection.readResponse();
    connection.close();
    expect(answer.status).toBe(200);
    expect(store.committed).toHaveLength(1);
  });

  it('answers 400 for a body that breaks its framing, counted and logged as a 400', async () => {
    const { deps, port } = await start();
    const connection = await RawConnection.open(port);
    await connection.write('PUT /t/upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\nzz\r\n');
    await connection.whenClosed();
    await expect.poll(() => deps.captured.lines().filter((l) => l.msg === 'request').length).toBe(1);
    expect(deps.captured.lines().find((l) => l.msg === 'request')).toMatchObject({ status: 400, route: '/t/upload' });
    expect(await deps.metrics.registry.metrics()).not.toContain('status="500"');
  });

  it('writes a stream’s log line and metrics when it ends, with its length, outside the latency histogram', async () => {
    const { deps, port } = await start();
    const res = await fetch(`http://127.0.0.1:${port}/t/download/200000`, { headers: { 'X-Request-Id': 'dl-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('dl-1');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect((await res.arrayBuffer()).byteLength).toBe(200_000);
    await expect.poll(() => deps.captured.lines().filter((l) => l.msg === 'request')).toEqual([
      expect.objectContaining({ route: '/t/download/:size', status: 200, bytes: 200_000, request_id: 'dl-1' }),
    ]);
    const text = await deps.metrics.registry.metrics();
    expect(text).toContain('felis_http_requests_total{face="external",method="GET",route="/t/download/:size",status="200"} 1');
    expect(text).toContain('felis_http_stream_bytes_total{face="external",method="GET",route="/t/download/:size",status="200"} 200000');
    expect(text).not.toMatch(/felis_http_request_duration_seconds_count\{[^}]*route="\/t\/download/);
  });

  it('logs a stream the client left as aborted, with the bytes sent until then', async () => {
    const { deps, port } = await start();
    const controller = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/t/download/9000000`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await expect.poll(() => deps.captured.lines().find((l) => l.msg === 'request'), { timeout: 5000 }).toMatchObject({ status: 200, aborted: true });
    const line = deps.captured.lines().find((l) => l.msg === 'request')!;
    expect(line.bytes as number).toBeLessThan(9_000_000);
  });
});
