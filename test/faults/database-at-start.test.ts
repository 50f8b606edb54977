import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS } from '../helpers/app.js';
import { startTestService } from '../helpers/service.js';
import { createUser, signIn } from '../helpers/sessions.js';
import { ThrowawayPostgres } from '../helpers/throwaway-postgres.js';

/** A GET through node:http (fetch would not send the Host header a session is bound to). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`${url}: no answer within 15 s`)));
    req.on('error', reject).end();
  });
}

async function eventually(check: () => Promise<void>, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

describe('PostgreSQL down when the service starts (issue 30, item 8)', () => {
  let pg: ThrowawayPostgres;
  let service: Awaited<ReturnType<typeof startTestService>> | undefined;

  beforeAll(async () => {
    pg = await ThrowawayPostgres.create();
    await pg.stop();
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await pg?.destroy();
  });

  it('starts, answers 503 on /readyz and the database routes, and serves once the database answers', async () => {
    const started = performance.now();
    service = await startTestService({ DATABASE_URL: pg.url });
    expect(performance.now() - started).toBeLessThan(15_000);
    const external = `http://127.0.0.1:${service.external.port}`;
    const internal = `http://127.0.0.1:${service.internal.port}`;
    const panel = { Host: service.deps.config.panelHost!, Cookie: 'svc_session=not-a-session' };

    expect((await get(`${external}/healthz`)).status).toBe(200);
    const ready = await get(`${internal}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toContain('database');
    const me = await get(`${external}/api/v1/me`, panel);
    expect(me.status).toBe(503);
    expect(me.headers['retry-after']).toMatch(/^\d+$/);
    expect((JSON.parse(me.body) as { error: { code: string } }).error.code).toBe('unavailable');
    // The proxy's reads come from the cluster's cache, not the database.
    expect((await get(`${internal}/api/v1/servers`, { Authorization: `Bearer ${TOKENS.proxy}` })).status).toBe(200);
    expect(service.captured.lines().some((l) => l.msg === 'database unreachable at start-up: answering 503 until it answers')).toBe(true);

    await pg.start();
    await eventually(async () => expect((await get(`${internal}/readyz`)).status).toBe(200), 20_000);
    // Migrated and serving: a real session works, a bad one is a client's mistake again.
    expect((await get(`${external}/api/v1/me`, panel)).status).toBe(401);
    const user = await createUser(service.deps);
    const session = await signIn(service.deps, { userId: user.id });
    expect((await get(`${external}/api/v1/me`, session.headers)).status).toBe(200);
    expect(service.captured.lines().some((l) => l.msg === 'database answers: serving')).toBe(true);
  }, 90_000);
});
