import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TOKENS } from '../helpers/app.js';
import { ECHO_PATH } from '../helpers/fixture-routes.js';
import { BUN, spawnService, type ServiceProcess } from '../helpers/process.js';
import { RawConnection } from '../helpers/raw-http.js';
import { echoHead, paddedBody, trickleUntilClosed } from '../helpers/slow-body.js';

/** The JSON body rules and the body-rate rule (judged after 300 ms here) on Bun.serve. */
describe('request bodies under Bun', () => {
  let server: ServiceProcess;

  beforeAll(async () => {
    server = await spawnService(BUN, ['test/server/fixtures/fixture-server.ts'], { BODY_RATE_GRACE_MS: '300' });
  }, 60_000);
  afterAll(() => server?.kill());

  it('closes the connection of a body that trickles', async () => {
    const conn = await RawConnection.open(server.internalPort);
    const body = paddedBody(100_000);
    const { sent, elapsedMs } = await trickleUntilClosed(conn, server.internalPort, body);
    expect(elapsedMs).toBeLessThan(3000);
    expect(sent).toBeLessThan(body.length);
    // The child's log line crosses a pipe after the close: on a loaded machine it can trail it.
    await vi.waitFor(() => expect(server.lines.some((l) => l.msg === 'request body too slow; connection closed')).toBe(true), { timeout: 5000 });
  });

  it('closes a stalled chunked body', async () => {
    const conn = await RawConnection.open(server.internalPort);
    await conn.write(echoHead(server.internalPort, ['Transfer-Encoding: chunked']) + '8\r\n{"name":\r\n');
    await conn.whenClosed();
    expect(conn.closed).toBe(true);
  });

  it('serves a body sent at once and one sent steadily past the grace period', async () => {
    const conn = await RawConnection.open(server.internalPort);
    try {
      const fast = paddedBody(200_000);
      await conn.write(echoHead(server.internalPort, [`Content-Length: ${fast.length}`]) + fast);
      const first = await conn.readResponse();
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body)).toEqual({ name: 'x', count: 1, caller: 'proxy' });

      const steady = paddedBody(96 * 1024);
      await conn.write(echoHead(server.internalPort, [`Content-Length: ${steady.length}`]));
      for (let sent = 0; sent < steady.length; sent += 8192) {
        await conn.write(steady.slice(sent, sent + 8192));
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await conn.readResponse()).status).toBe(200);
    } finally {
      conn.close();
    }
  });

  it('knows the TCP peer of a request whose body it counted, chunked or not', async () => {
    const url = `http://127.0.0.1:${server.internalPort}/api/v1/fixture/ip`;
    const sized = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"note":"x"}' });
    expect(await sized.json()).toEqual({ ip: '127.0.0.1' });
    const chunked = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: new Blob(['{"note":"y"}']).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(await chunked.json()).toEqual({ ip: '127.0.0.1' });
  });

  it('answers 413 to a chunked body over 1 MiB, 415 to text and 400 to unknown fields', async () => {
    const base = `http://127.0.0.1:${server.internalPort}${ECHO_PATH}`;
    const auth = { Authorization: `Bearer ${TOKENS.proxy}` };
    let sent = 0;
    const big = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 1024 * 1024 + 1) return controller.close();
        controller.enqueue(new Uint8Array(64 * 1024).fill(32));
        sent += 64 * 1024;
      },
    });
    const tooLarge = await fetch(base, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: big,
      duplex: 'half',
    } as RequestInit);
    expect(tooLarge.status).toBe(413);
    const text = await fetch(base, { method: 'POST', headers: { ...auth, 'Content-Type': 'text/plain' }, body: '{}' });
    expect(text.status).toBe(415);
    const unknown = await fetch(base, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x', count: 1, extra: true }),
    });
    expect(unknown.status).toBe(400);
  });
});
