import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../src/service.js';
import { TOKENS } from '../helpers/app.js';
import { startTestService } from '../helpers/service.js';
import { createUser, signIn, type SignedIn } from '../helpers/sessions.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { ThrowawayPostgres } from '../helpers/throwaway-postgres.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  ms: number;
}

function get(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, ms: performance.now() - started }));
    });
    // Far above any deadline of the service: a request still open then is the hang this suite hunts.
    req.setTimeout(15_000, () => req.destroy(new Error(`${path}: no answer within 15 s`)));
    req.on('error', reject).end();
  });
}

/** Polls until `check` passes; the outage's edges are decided by the service's own timers. */
async function eventually(check: () => Promise<void>, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function expectUnavailable(answer: Answer): void {
  expect(answer.status, answer.body).toBe(503);
  expect(answer.headers['retry-after']).toMatch(/^\d+$/);
  expect(answer.headers['x-request-id']).toBeTruthy();
  const { error } = JSON.parse(answer.body) as { error: { code: string; request_id: string } };
  expect(error.code).toBe('unavailable');
  expect(error.request_id).toBe(answer.headers['x-request-id']);
}

/** The answers that must not change during an outage: probes and the proxy's cache reads. */
async function expectNoDatabaseRoutesServe(service: RunningService): Promise<void> {
  const healthz = await get(service.external.port, '/healthz', {});
  expect(healthz.status).toBe(200);
  const fleet = await get(service.internal.port, '/api/v1/servers', { Authorization: `Bearer ${TOKENS.proxy}` });
  expect(fleet.status).toBe(200);
  const ready = await get(service.internal.port, '/readyz', {});
  expect(ready.status).toBe(503);
  expect(ready.body).toContain('database');
}

describe('a PostgreSQL outage', () => {
  let pg: ThrowawayPostgres;
  let relay: TcpProxy;
  let service: Awaited<ReturnType<typeof startTestService>>;
  let owner: SignedIn;
  const me = () => get(service.external.port, '/api/v1/me', owner.headers);

  beforeAll(async () => {
    pg = await ThrowawayPostgres.create();
    relay = await TcpProxy.start(pg.port);
    service = await startTestService({ DATABASE_URL: `postgres://postgres@127.0.0.1:${relay.port}/postgres` });
    const user = await createUser(service.deps);
    owner = await signIn(service.deps, { userId: user.id });
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await relay?.close();
    await pg?.destroy();
  });

  it('answers 503 at once while the server is stopped, keeps the probes and the cache, and recovers by itself', async () => {
    expect((await me()).status).toBe(200);
    await pg.stop();

    const first = await me();
    expectUnavailable(first);
    expect(first.ms).toBeLessThan(10_000);
    // Once the guard has seen the failure, nothing waits on the database.
    const answers = await Promise.all(Array.from({ length: 20 }, () => me()));
    for (const answer of answers) expectUnavailable(answer);
    await expectNoDatabaseRoutesServe(service);
    expect(service.captured.lines().some((l) => l.msg === 'dependency unavailable' && l.level === 'warn')).toBe(true);
    expect(service.captured.lines().filter((l) => l.msg === 'unexpected error')).toEqual([]);

    await pg.start();
    await eventually(async () => expect((await me()).status).toBe(200), 10_000);
  }, 60_000);

  it('answers 503 within the deadline when the database goes silent, then recovers when it speaks again', async () => {
    expect((await me()).status).toBe(200);
    relay.blackHole();

    const silent = await Promise.all(Array.from({ length: 12 }, () => me()));
    for (const answer of silent) {
      expectUnavailable(answer);
      expect(answer.ms).toBeLessThan(10_000);
    }
    // The probe has found the database silent: later requests do not wait for the deadline again.
    await eventually(async () => expect(service.deps.database.guard.down).toBe(true), 5_000);
    const fast = await me();
    expectUnavailable(fast);
    await expectNoDatabaseRoutesServe(service);

    relay.restore();
    await eventually(async () => expect((await me()).status).toBe(200), 10_000);
    expect(service.captured.lines().some((l) => l.msg === 'database answers again')).toBe(true);
  }, 60_000);
});
