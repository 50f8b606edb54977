import { connect } from 'node:net';
import { join } from 'node:path';
import { z } from '@hono/zod-openapi';
import { afterAll, describe, expect, it } from 'vitest';
import { createRouter, defineRoute } from '../../src/http/route.js';
import { serve } from '../../src/runtime/serve.js';
import { createTestApp, createTestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { builtImage, spawnService, type ServiceProcess } from '../helpers/process.js';
import { RawConnection } from '../helpers/raw-http.js';
import { startTestService } from '../helpers/service.js';

/** A route whose handler waits until the test lets it answer. */
function slowRoute() {
  let entered!: () => void;
  let release!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  const released = new Promise<void>((r) => (release = r));
  const route = defineRoute(
    { tier: 'public' },
    {
      method: 'get',
      path: '/slow',
      responses: { 200: { description: 'done', content: { 'application/json': { schema: z.object({ done: z.boolean() }) } } } },
    },
  );
  const router = createRouter().openapi(route, async (c) => {
    entered();
    await released;
    return c.json({ done: true }, 200);
  });
  return { router, inHandler, release };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('graceful shutdown', () => {
  const database = useTestDatabase();

  it('stops accepting, finishes the in-flight request, then closes', async () => {
    const deps = createTestDeps(database());
    const slow = slowRoute();
    const app = createTestApp('internal', deps, slow.router);
    const server = await serve({ fetch: app.fetch, port: 0, host: '127.0.0.1', log: deps.log });
    const idle = await RawConnection.open(server.port);
    const busy = await RawConnection.open(server.port);
    await busy.write(`GET /slow HTTP/1.1\r\nHost: x\r\n\r\n`);
    await slow.inHandler;

    let closed = false;
    // A grace far past the test's own time-out: a close that resolves at all was ended by the
    // drain, not by the grace running out (no wall-clock bound asserted).
    const closing = server.close(3_600_000).then(() => (closed = true));
    await idle.whenClosed();
    expect(await refused(server.port)).toBe(true);
    expect(closed).toBe(false);

    slow.release();
    const res = await busy.readResponse();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ done: true });
    expect(res.headers.connection).toBe('close');
    await closing;
    await busy.whenClosed();
  });

  it('cuts a request that outlives the grace period', async () => {
    const deps = createTestDeps(database());
    const slow = slowRoute();
    const app = createTestApp('internal', deps, slow.router);
    const server = await serve({ fetch: app.fetch, port: 0, host: '127.0.0.1', log: deps.log });
    const busy = await RawConnection.open(server.port);
    await busy.write(`GET /slow HTTP/1.1\r\nHost: x\r\n\r\n`);
    await slow.inHandler;
    await server.close(150);
    await busy.whenClosed();
    slow.release();
  });

  it('aborts the shutdown signal for streams and closes the database when the service stops', async () => {
    const service = await startTestService();
    expect(service.deps.shutdown.aborted).toBe(false);
    const stopping = service.stop();
    expect(service.deps.shutdown.aborted).toBe(true);
    await stopping;
    await expect(service.deps.database.ping(500)).rejects.toThrow();
    expect(await refused(service.internal.port)).toBe(true);
    expect(await refused(service.external.port)).toBe(true);
    expect(service.captured.lines().at(-1)?.msg).toBe('stopped');
    await service.stop();
  }, 60_000);

  describe('the process', () => {
    // Both processes start together: each is a cold start (an embedded database) and the two tests
    // need one each (a signal ends it). The built service, as the image runs it: a start under tsx
    // took 2 to 5 times as long (loading every module through its hooks).
    const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
    let started: Promise<ServiceProcess[]> | undefined;
    const serviceFor = (signal: (typeof SIGNALS)[number]) => {
      started ??= builtImage().then((image) => Promise.all(SIGNALS.map(() => spawnService(process.execPath, [join(image, 'dist/main.js')]))));
      return started.then((services) => services[SIGNALS.indexOf(signal)]!);
    };
    afterAll(async () => {
      for (const service of (await started?.catch(() => [])) ?? []) service.kill();
    });

    for (const signal of SIGNALS) {
      it(`exits 0 on ${signal} after answering, with a kept-alive connection open`, async () => {
        const service = await serviceFor(signal);
        try {
          const conn = await RawConnection.open(service.internalPort);
          await conn.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
          expect((await conn.readResponse()).status).toBe(200);
          const external = await fetch(`http://127.0.0.1:${service.externalPort}/healthz`);
          expect(external.status).toBe(200);

          service.child.kill(signal);
          // A repeated signal during the drain (a relaying wrapper, a second Ctrl-C) must not kill it.
          while (service.child.exitCode === null && service.child.signalCode === null && !service.lines.some((l) => l.msg === 'shutting down')) {
            await new Promise((r) => setTimeout(r, 5));
          }
          if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
          expect(await service.exited).toBe(0);
          await conn.whenClosed();
          const messages = service.lines.map((l) => l.msg);
          expect(messages).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
          expect(service.lines.find((l) => l.msg === 'shutting down')?.signal).toBe(signal);
          expect(service.stderr()).toBe('');
        } finally {
          service.kill();
        }
      }, 90_000);
    }
  });
});
