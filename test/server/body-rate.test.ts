import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type Listening } from '../../src/runtime/serve.js';
import { TOKENS, createTestApp, createTestDeps, type TestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { ECHO_PATH, fixtureRoutes } from '../helpers/fixture-routes.js';
import { RawConnection } from '../helpers/raw-http.js';
import { echoHead, paddedBody, trickleUntilClosed } from '../helpers/slow-body.js';

/** The contract's rule scaled down: judged after 300 ms instead of 30 s, 16 KiB/s as in the contract. */
const RULE = { graceMs: 300, minBytesPerSecond: 16 * 1024, checkEveryMs: 50 };

describe('request body rate', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let server: Listening;

  beforeAll(async () => {
    deps = createTestDeps(database());
    const app = createTestApp('internal', deps, fixtureRoutes());
    server = await serve({ fetch: app.fetch, port: 0, host: '127.0.0.1', log: deps.log, bodyRate: RULE });
  });
  afterAll(() => server?.close(100));

  it('closes the connection of a body that trickles below the rate after the grace period', async () => {
    const conn = await RawConnection.open(server.port);
    const body = paddedBody(100_000);
    const { sent, elapsedMs } = await trickleUntilClosed(conn, server.port, body);
    expect(elapsedMs).toBeGreaterThanOrEqual(RULE.graceMs - 20);
    expect(elapsedMs).toBeLessThan(2000);
    expect(sent).toBeLessThan(body.length);
    const warning = deps.captured.lines().find((l) => l.msg === 'request body too slow; connection closed');
    expect(warning).toMatchObject({ level: 'warn', method: 'POST', path: ECHO_PATH });
  });

  it('closes a chunked body that trickles, too', async () => {
    const conn = await RawConnection.open(server.port);
    await conn.write(echoHead(server.port, ['Transfer-Encoding: chunked']));
    const trickle = setInterval(() => {
      if (!conn.closed) conn.socket.write('1\r\n \r\n');
    }, 25);
    try {
      await conn.whenClosed();
    } finally {
      clearInterval(trickle);
    }
    expect(conn.closed).toBe(true);
  });

  it('closes a connection whose body stalls completely', async () => {
    const conn = await RawConnection.open(server.port);
    await conn.write(echoHead(server.port, ['Content-Length: 1000']) + '{"name":');
    await conn.whenClosed();
    expect(conn.closed).toBe(true);
  });

  it('serves a body sent at once', async () => {
    const conn = await RawConnection.open(server.port);
    try {
      const body = paddedBody(200_000);
      await conn.write(echoHead(server.port, [`Content-Length: ${body.length}`]) + body);
      const res = await conn.readResponse();
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ name: 'x', count: 1, caller: 'proxy' });
    } finally {
      conn.close();
    }
  });

  it('serves a body that takes longer than the grace period at a sufficient rate', async () => {
    const conn = await RawConnection.open(server.port);
    try {
      const body = paddedBody(96 * 1024);
      await conn.write(echoHead(server.port, [`Content-Length: ${body.length}`]));
      const started = Date.now();
      // 8 KiB every 50 ms is 160 KiB/s, ten times the minimum (room for a loaded machine), for ~600 ms.
      for (let sent = 0; sent < body.length; sent += 8192) {
        await conn.write(body.slice(sent, sent + 8192));
        await new Promise((r) => setTimeout(r, 50));
      }
      const res = await conn.readResponse();
      expect(Date.now() - started).toBeGreaterThan(RULE.graceMs);
      expect(res.status).toBe(200);
    } finally {
      conn.close();
    }
  });

  it('answers 413 to a chunked body over 1 MiB on a real connection, and 415 to text', async () => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 1024 * 1024 + 1) return controller.close();
        controller.enqueue(new Uint8Array(64 * 1024).fill(32));
        sent += 64 * 1024;
      },
    });
    const res = await fetch(`http://127.0.0.1:${server.port}${ECHO_PATH}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.proxy}`, 'Content-Type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('too_large');
    const text = await fetch(`http://127.0.0.1:${server.port}${ECHO_PATH}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.proxy}`, 'Content-Type': 'text/plain' },
      body: '{"name":"x","count":1}',
    });
    expect(text.status).toBe(415);
  });

  it('keeps no listener per request on a kept-alive connection (many bodies, one connection)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const conn = await RawConnection.open(server.port);
    try {
      const body = paddedBody(100);
      for (let i = 0; i < 15; i++) {
        await conn.write(echoHead(server.port, [`Content-Length: ${body.length}`]) + body);
        expect((await conn.readResponse()).status).toBe(200);
      }
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      conn.close();
    }
  });

  it('leaves a bodiless request on a kept-alive connection alone', async () => {
    const conn = await RawConnection.open(server.port);
    try {
      await conn.write(`GET /api/v1/fixture/items/a1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
      expect((await conn.readResponse()).status).toBe(200);
      await new Promise((r) => setTimeout(r, RULE.graceMs + 100));
      expect(conn.closed).toBe(false);
      await conn.write(`GET /api/v1/fixture/items/a2 HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect((await conn.readResponse()).status).toBe(200);
    } finally {
      conn.close();
    }
  });
});
