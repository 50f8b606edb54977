import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService } from '../helpers/service.js';

/** A socket that sends the start of a request head and then nothing; resolves when it is open. */
function slowHead(port: number): Promise<Socket & { closedAt?: number; gone: Promise<void>; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1') as Socket & { closedAt?: number; gone: Promise<void>; answer: string };
    socket.answer = '';
    socket.on('data', (d: Buffer) => (socket.answer += d.toString()));
    socket.gone = new Promise((closed) =>
      socket.on('close', () => {
        socket.closedAt = performance.now();
        closed();
      }),
    );
    socket.on('error', () => {});
    socket.once('connect', () => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: panel.felis.test\r\nX-Slow: ');
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

async function probe(port: number): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

describe('slow heads and connection floods (issue 30, item 10)', () => {
  let service: Awaited<ReturnType<typeof startTestService>>;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    service = await startTestService({ HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_MAX_CONNECTIONS: '40', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '10' });
  }, 60_000);

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await service?.stop();
  });

  it('cuts a slow head within its time-out, closes one address past its cap, and the internal face keeps answering', async () => {
    const external = service.external.port;
    const opened = performance.now();
    const flood = await Promise.all(Array.from({ length: 30 }, () => slowHead(external)));
    sockets.push(...flood);
    // What the other clients saw meanwhile: the probes on the internal face.
    const probes = await Promise.all(Array.from({ length: 10 }, () => probe(service.internal.port)));
    console.log(`internal /healthz during the flood: ${probes.map((p) => `${p.status} in ${p.ms.toFixed(0)} ms`).join(', ')}`);
    for (const p of probes) expect(p.status).toBe(200);

    // Until every one is closed, for 2.5 s at most (what is still open then fails below).
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(flood.map((s) => s.gone)), new Promise((resolve) => (bound = setTimeout(resolve, 2_500)))]);
    clearTimeout(bound);
    const closed = flood.filter((s) => s.closedAt !== undefined);
    // Past the per-address cap: closed at once; within it: cut by the head's time-out (1 s, checked every 250 ms).
    expect(closed).toHaveLength(30);
    const cutAfter = flood.filter((s) => s.answer.includes('408')).map((s) => s.closedAt! - opened);
    expect(cutAfter.length).toBe(10);
    for (const ms of cutAfter) expect(ms).toBeLessThan(2_500);
    console.log(`slow heads: ${30 - cutAfter.length} closed at the cap, ${cutAfter.length} answered 408 after ${Math.max(...cutAfter).toFixed(0)} ms at most`);
    // The external face answers again once the flood is gone: the service counts a connection gone
    // a moment after its client saw it closed, so within the 2.5 s the flood had before.
    const gone = performance.now();
    let again = await probe(external).catch(() => undefined);
    while (again?.status !== 200 && performance.now() - gone < 2_500) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await probe(external).catch(() => undefined);
    }
    expect(again?.status).toBe(200);
  }, 30_000);
});

/** An idle connection (nothing sent) and whether the service has closed it; resolves when it is open. */
function idle(port: number): Promise<{ socket: Socket; shut: () => boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let shut = false;
    socket.on('close', () => (shut = true));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, shut: () => shut }));
    socket.once('error', reject);
  });
}

describe('the per-address connection cap behind an edge (issue 43 item 12)', () => {
  const sockets: Socket[] = [];
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
  });

  /** Opens 12 idle connections from loopback to a service with a cap of 5 per address; answers how many it closed. */
  async function closedOf(env: Record<string, string>): Promise<number> {
    const service = await startTestService({ CLIENT_IP_HEADER: 'x-real-ip', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '5', ...env });
    try {
      const opened = await Promise.all(Array.from({ length: 12 }, () => idle(service.external.port)));
      sockets.push(...opened.map((o) => o.socket));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const closed = opened.filter((o) => o.shut()).length;
      for (const { socket } of opened) socket.destroy();
      return closed;
    } finally {
      await service.stop();
    }
  }

  it('caps a client that is not a trusted proxy by its own address, and leaves the trusted edge alone', async () => {
    // Loopback is not the edge: before TRUSTED_PROXIES, CLIENT_IP_HEADER turned the cap off for everyone.
    expect(await closedOf({ TRUSTED_PROXIES: '192.0.2.10,2001:db8::/32' })).toBe(7);
    // Loopback is the edge: it carries every visitor, and is not capped.
    expect(await closedOf({ TRUSTED_PROXIES: '127.0.0.0/8' })).toBe(0);
  }, 60_000);
});
